// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC165} from "@openzeppelin/contracts/interfaces/IERC165.sol";
import {IERC4906} from "@openzeppelin/contracts/interfaces/IERC4906.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/**
 * @title PhygitalToken
 * @notice A "managed" ERC-721 for NFC-chipped objects. Tokens move only with a signature from
 * `signVerifier` (the gateway's key), pulled by anyone (in practice the gateway's relayer):
 * `mintNFT` for an unminted token, `claimNFT` to move a minted one to the person who tapped the chip.
 * The signed hash is keccak256(abi.encodePacked(blockExpiry, recipient, tokenId, this, chainid, nonce))
 * (EIP-191 personal_sign), valid while block.number < blockExpiry. `nonce` is the token's own,
 * advanced by every move of the token: a signature handed out for one recipient is dead as soon as
 * the token went anywhere else, and works at most once. The chain id keeps it to this chain.
 * Ordinary transfers and approvals are disabled: whoever holds the chip decides who holds the token.
 */
contract PhygitalToken is ERC721, Ownable, IERC4906 {
    /// The block number is not below `blockExpiry`.
    error SignatureExpired(uint256 blockExpiry);
    /// The signature is malformed, or its signer is not `signVerifier` (which covers a stale token nonce).
    error InvalidSignature();
    /// transferFrom / safeTransferFrom: tokens move only through claimNFT.
    error PublicTransfersDisabled();
    /// approve / setApprovalForAll: there is nothing to approve.
    error PublicApprovalsDisabled();

    event SignVerifierSet(address indexed previousSignVerifier, address indexed newSignVerifier);

    address private _signVerifier;
    string private _baseTokenURI;

    /// Per-token nonce inside the signed hash; advanced in _update, i.e. by every move of the token.
    mapping(uint256 => uint256) private _tokenNonces;

    constructor(
        string memory name_,
        string memory symbol_,
        address signVerifier_,
        string memory baseURI_
    ) ERC721(name_, symbol_) Ownable(msg.sender) {
        _signVerifier = signVerifier_;
        _baseTokenURI = baseURI_;
        emit SignVerifierSet(address(0), signVerifier_);
    }

    // ---------------------------------------------------------------- signature pull

    function signVerifier() external view returns (address) {
        return _signVerifier;
    }

    /// How many times `tokenId` has moved (mint included): the nonce its next signature must carry.
    function getTokenNonce(uint256 tokenId) external view returns (uint256) {
        return _tokenNonces[tokenId];
    }

    /// The 32 bytes the signVerifier personal_signs (EIP-191) to let `recipient` receive `tokenId` now, on this chain.
    function getClaimSigningHash(uint256 blockExpiry, address recipient, uint256 tokenId) public view returns (bytes32) {
        return keccak256(abi.encodePacked(blockExpiry, recipient, tokenId, address(this), block.chainid, _tokenNonces[tokenId]));
    }

    /// Mints the unminted `tokenId` to `recipient`.
    function mintNFT(bytes calldata sig, uint256 blockExpiry, address recipient, uint256 tokenId) external {
        _checkSignature(sig, blockExpiry, recipient, tokenId);
        _safeMint(recipient, tokenId);
    }

    /// Moves the minted `tokenId` from its current owner to `recipient`, without the owner's approval.
    function claimNFT(bytes calldata sig, uint256 blockExpiry, address recipient, uint256 tokenId) external {
        _checkSignature(sig, blockExpiry, recipient, tokenId);
        _safeTransfer(_requireOwned(tokenId), recipient, tokenId, "");
    }

    function _checkSignature(bytes calldata sig, uint256 blockExpiry, address recipient, uint256 tokenId) private view {
        if (block.number >= blockExpiry) revert SignatureExpired(blockExpiry);
        bytes32 digest = MessageHashUtils.toEthSignedMessageHash(getClaimSigningHash(blockExpiry, recipient, tokenId));
        (address signer, ECDSA.RecoverError err, ) = ECDSA.tryRecoverCalldata(digest, sig);
        // NoError implies signer != 0, so a zero signVerifier accepts no signature at all.
        // The nonce is used up by the move itself (_update), before the receiver callback.
        if (err != ECDSA.RecoverError.NoError || signer != _signVerifier) revert InvalidSignature();
    }

    // ---------------------------------------------------------------- owner (the gateway's relayer)

    /// Key rotation. Signatures by the previous key stop working at once; address(0) disables minting and claiming.
    function setSignVerifier(address newSignVerifier) external onlyOwner {
        emit SignVerifierSet(_signVerifier, newSignVerifier);
        _signVerifier = newSignVerifier;
    }

    function setBaseURI(string calldata baseURI_) external onlyOwner {
        _baseTokenURI = baseURI_;
        emit BatchMetadataUpdate(0, type(uint256).max);
    }

    /// Asks marketplaces and indexers to fetch the token's metadata again (ERC-4906).
    function refreshMetadata(uint256 tokenId) external onlyOwner {
        emit MetadataUpdate(tokenId);
    }

    // ---------------------------------------------------------------- ERC-721 surface

    function _baseURI() internal view override returns (string memory) {
        return _baseTokenURI;
    }

    /// ERC-165, plus 0x49064906 for ERC-4906 (which defines only events).
    function supportsInterface(bytes4 interfaceId) public view override(ERC721, IERC165) returns (bool) {
        return interfaceId == bytes4(0x49064906) || super.supportsInterface(interfaceId);
    }

    // Public transfers and approvals are shut at OpenZeppelin's internal hooks rather than by
    // overriding transferFrom & co. with a bare revert: ERC721's own safeTransferFrom calls
    // transferFrom, and an always-reverting override makes solc warn about unreachable code there.
    // The ABI keeps ERC-721's functions, signatures and mutability.

    /// transferFrom and both safeTransferFrom pass the caller as `auth`; mint and claim pass address(0).
    /// Every balance change passes here, so this is where the token's nonce moves: any signature
    /// made before the move is dead, and _safeMint / _safeTransfer call the receiver only after it.
    function _update(address to, uint256 tokenId, address auth) internal override returns (address) {
        if (auth != address(0)) revert PublicTransfersDisabled();
        unchecked {
            _tokenNonces[tokenId]++;
        }
        return super._update(to, tokenId, auth);
    }

    /// approve passes the caller as `auth`; the approval reset inside a transfer passes address(0).
    function _approve(address to, uint256 tokenId, address auth, bool emitEvent) internal override {
        if (auth != address(0)) revert PublicApprovalsDisabled();
        super._approve(to, tokenId, auth, emitEvent);
    }

    /// Only setApprovalForAll calls this.
    function _setApprovalForAll(address, address, bool) internal pure override {
        revert PublicApprovalsDisabled();
    }
}
