import { createApiKeysRepository } from './apiKeys.js'
import { createAttendeeChipsRepository } from './attendeeChips.js'
import { createAttendeeImportsRepository } from './attendeeImports.js'
import { createAttendeesRepository } from './attendees.js'
import { createChainTxsRepository } from './chainTxs.js'
import { createChipGroupsRepository } from './chipGroups.js'
import { createChipProfilesRepository } from './chipProfiles.js'
import { createChipsRepository } from './chips.js'
import { createClaimRegistrationsRepository } from './claimRegistrations.js'
import { createClaimsRepository } from './claims.js'
import { createConsoleAuthRepository } from './consoleAuth.js'
import { createGatewayMetaRepository } from './gatewayMeta.js'
import { createGuestbookRepository } from './guestbook.js'
import { createOtpsRepository } from './otps.js'
import { createPhygitalContractsRepository } from './phygitalContracts.js'
import { createProofEventsRepository } from './proofEvents.js'
import { createProvisioningRepository } from './provisioning.js'
import { createRefsRepository } from './refs.js'
import { createRelayerLeasesRepository } from './relayerLeases.js'
import { createSealedKeysRepository } from './sealedKeys.js'
import { createStationEventsRepository } from './stationEvents.js'
import { createCheckInsRepository } from './checkIns.js'
import { createDoorLogRepository } from './doorLog.js'
import { createKioskTokensRepository } from './kioskTokens.js'
import { createMediaRepository } from './media.js'
import { createStaffAuthRepository } from './staffAuth.js'
import { createStationsRepository } from './stations.js'
import { createTapLogRepository } from './tapLog.js'
import { createTeamsRepository } from './teams.js'
import { createTokensRepository } from './tokens.js'
import { createTransfersRepository } from './transfers.js'
import { createUsedSignaturesRepository } from './usedSignatures.js'
import type { Db } from './sqlite/openDatabase.js'

/** Every repository over one connection (what a `Store` and a transaction's `Tx` both carry). */
export function createRepositories(db: Db) {
  return {
    teams: createTeamsRepository(db),
    apiKeys: createApiKeysRepository(db),
    chipGroups: createChipGroupsRepository(db),
    chips: createChipsRepository(db),
    tokens: createTokensRepository(db),
    proofEvents: createProofEventsRepository(db),
    guestbook: createGuestbookRepository(db),
    refs: createRefsRepository(db),
    otps: createOtpsRepository(db),
    claimRegistrations: createClaimRegistrationsRepository(db),
    tapLog: createTapLogRepository(db),
    chipProfiles: createChipProfilesRepository(db),
    stations: createStationsRepository(db),
    stationEvents: createStationEventsRepository(db),
    checkIns: createCheckInsRepository(db),
    attendees: createAttendeesRepository(db),
    attendeeChips: createAttendeeChipsRepository(db),
    attendeeImports: createAttendeeImportsRepository(db),
    doorLog: createDoorLogRepository(db),
    claims: createClaimsRepository(db),
    kioskTokens: createKioskTokensRepository(db),
    media: createMediaRepository(db),
    staffAuth: createStaffAuthRepository(db),
    consoleAuth: createConsoleAuthRepository(db),
    chainTxs: createChainTxsRepository(db),
    relayerLeases: createRelayerLeasesRepository(db),
    phygitalContracts: createPhygitalContractsRepository(db),
    transfers: createTransfersRepository(db),
    usedSignatures: createUsedSignaturesRepository(db),
    gatewayMeta: createGatewayMetaRepository(db),
    sealedKeys: createSealedKeysRepository(db),
    provisioning: createProvisioningRepository(db),
  }
}

export type Repositories = ReturnType<typeof createRepositories>
