// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/**
 * @title Guestbook
 * @notice ERC-1155 attendance tokens: one token id per event, one unit per mint. The owner (the
 * gateway's relayer) mints directly, or anyone submits a signature from `signVerifier` to
 * `mintWithSig` (the hash has PhygitalToken's form: keccak256(abi.encodePacked(blockExpiry,
 * account, id, this, chainid, nonce)), EIP-191, valid while block.number < blockExpiry, once per
 * nonce; here the nonce is the account's, since a mint moves no existing token).
 * With transfers paused the tokens are soulbound: they can be minted and burned, not moved.
 */
contract Guestbook is ERC1155, Ownable {
    using Strings for uint256;

    /// The block number is not below `blockExpiry`.
    error SignatureExpired(uint256 blockExpiry);
    /// The signature is malformed, or its signer is not `signVerifier` (which covers a used nonce).
    error InvalidSignature();
    /// A holder-to-holder transfer while transfers are paused.
    error TransfersPaused();

    event SignVerifierSet(address indexed previousSignVerifier, address indexed newSignVerifier);
    event TransfersPausedSet(bool paused);

    string private _name;
    string private _symbol;
    string private _baseTokenURI;
    address private _signVerifier;
    bool private _transfersPaused;

    mapping(uint256 id => string) private _tokenURIs;
    /// Per-account nonce inside the signed hash; bumped by every successful mintWithSig.
    mapping(address => uint256) private mintNonces;

    constructor(
        string memory name_,
        string memory symbol_,
        address signVerifier_,
        string memory baseURI_
    ) ERC1155("") Ownable(msg.sender) {
        _name = name_;
        _symbol = symbol_;
        _signVerifier = signVerifier_;
        _baseTokenURI = baseURI_;
        emit SignVerifierSet(address(0), signVerifier_);
    }

    function name() external view returns (string memory) {
        return _name;
    }

    function symbol() external view returns (string memory) {
        return _symbol;
    }

    /// The URI set for `id` with setTokenURI, else baseURI followed by the decimal id.
    function uri(uint256 id) public view override returns (string memory) {
        string memory tokenURI = _tokenURIs[id];
        return bytes(tokenURI).length > 0 ? tokenURI : string.concat(_baseTokenURI, id.toString());
    }

    function transfersPaused() external view returns (bool) {
        return _transfersPaused;
    }

    // ---------------------------------------------------------------- minting

    function mint(address to, uint256 id) external onlyOwner {
        _mint(to, id, 1, "");
    }

    function signVerifier() external view returns (address) {
        return _signVerifier;
    }

    function getMintNonce(address account) external view returns (uint256) {
        return mintNonces[account];
    }

    /// The 32 bytes the signVerifier personal_signs (EIP-191) to let `account` mint one `id`.
    function getMintSigningHash(uint256 blockExpiry, address account, uint256 id) public view returns (bytes32) {
        return keccak256(abi.encodePacked(blockExpiry, account, id, address(this), block.chainid, mintNonces[account]));
    }

    function mintWithSig(address account, uint256 id, bytes calldata data, bytes calldata sig, uint256 blockExpiry) external {
        if (block.number >= blockExpiry) revert SignatureExpired(blockExpiry);
        bytes32 digest = MessageHashUtils.toEthSignedMessageHash(getMintSigningHash(blockExpiry, account, id));
        (address signer, ECDSA.RecoverError err, ) = ECDSA.tryRecoverCalldata(digest, sig);
        // NoError implies signer != 0, so a zero signVerifier accepts no signature at all.
        if (err != ECDSA.RecoverError.NoError || signer != _signVerifier) revert InvalidSignature();
        // Before the receiver callback, so a signature cannot be replayed from onERC1155Received.
        mintNonces[account]++;
        _mint(account, id, 1, data);
    }

    // ---------------------------------------------------------------- owner (the gateway's relayer)

    /// Key rotation. Signatures by the previous key stop working at once; address(0) disables mintWithSig.
    function setSignVerifier(address newSignVerifier) external onlyOwner {
        emit SignVerifierSet(_signVerifier, newSignVerifier);
        _signVerifier = newSignVerifier;
    }

    function setBaseURI(string calldata baseURI_) external onlyOwner {
        _baseTokenURI = baseURI_;
    }

    /// A URI for one id, overriding baseURI + id; an empty string returns `id` to the default.
    function setTokenURI(uint256 id, string calldata tokenURI) external onlyOwner {
        _tokenURIs[id] = tokenURI;
        emit URI(uri(id), id);
    }

    function setTransfersPaused(bool paused) external onlyOwner {
        _transfersPaused = paused;
        emit TransfersPausedSet(paused);
    }

    /// Every balance change goes through here: with transfers paused only mints and burns pass.
    function _update(address from, address to, uint256[] memory ids, uint256[] memory values) internal override {
        if (_transfersPaused && from != address(0) && to != address(0)) revert TransfersPaused();
        super._update(from, to, ids, values);
    }
}
