import type { Repositories } from '../types.js'
import type { PgQuery } from './connect.js'
import { createPgApiKeysRepository } from './apiKeys.js'
import { createPgAttendeeChipsRepository } from './attendeeChips.js'
import { createPgAttendeeImportsRepository } from './attendeeImports.js'
import { createPgAttendeesRepository } from './attendees.js'
import { createPgDoorLogRepository } from './doorLog.js'
import { createPgChainTxsRepository } from './chainTxs.js'
import { createPgGatewayMetaRepository } from './gatewayMeta.js'
import { createPgPhygitalContractsRepository } from './phygitalContracts.js'
import { createPgRelayerLeasesRepository } from './relayerLeases.js'
import { createPgSealedKeysRepository } from './sealedKeys.js'
import { createPgUsedSignaturesRepository } from './usedSignatures.js'
import { createPgChipsRepository } from './chips.js'
import { createPgChipGroupsRepository } from './chipGroups.js'
import { createPgChipProfilesRepository } from './chipProfiles.js'
import { createPgMediaRepository } from './media.js'
import { createPgOtpsRepository } from './otps.js'
import { createPgProofEventsRepository } from './proofEvents.js'
import { createPgRefsRepository } from './refs.js'
import { createPgTeamsRepository } from './teams.js'
import { createPgTokensRepository } from './tokens.js'
import { createPgTransfersRepository } from './transfers.js'
import { createPgClaimRegistrationsRepository } from './claimRegistrations.js'
import { createPgClaimsRepository } from './claims.js'
import { createPgConsoleAuthRepository } from './consoleAuth.js'
import { createPgGuestbookRepository } from './guestbook.js'
import { createPgCheckInsRepository } from './checkIns.js'
import { createPgKioskTokensRepository } from './kioskTokens.js'
import { createPgProvisioningRepository } from './provisioning.js'
import { createPgStaffAuthRepository } from './staffAuth.js'
import { createPgStationEventsRepository } from './stationEvents.js'
import { createPgStationsRepository } from './stations.js'
import { createPgTapLogRepository } from './tapLog.js'

/**
 * Every repository on PostgreSQL over a client or one transaction. Built per transaction (closures
 * only, no I/O: postgres.js prepares each statement once per connection by itself).
 */
export function createPgRepositories(sql: PgQuery): Repositories {
  return {
    teams: createPgTeamsRepository(sql),
    tokens: createPgTokensRepository(sql),
    transfers: createPgTransfersRepository(sql),
    claimRegistrations: createPgClaimRegistrationsRepository(sql),
    claims: createPgClaimsRepository(sql),
    guestbook: createPgGuestbookRepository(sql),
    chips: createPgChipsRepository(sql),
    chipGroups: createPgChipGroupsRepository(sql),
    chipProfiles: createPgChipProfilesRepository(sql),
    media: createPgMediaRepository(sql),
    otps: createPgOtpsRepository(sql),
    proofEvents: createPgProofEventsRepository(sql),
    refs: createPgRefsRepository(sql),
    apiKeys: createPgApiKeysRepository(sql),
    chainTxs: createPgChainTxsRepository(sql),
    relayerLeases: createPgRelayerLeasesRepository(sql),
    phygitalContracts: createPgPhygitalContractsRepository(sql),
    usedSignatures: createPgUsedSignaturesRepository(sql),
    gatewayMeta: createPgGatewayMetaRepository(sql),
    sealedKeys: createPgSealedKeysRepository(sql),
    stations: createPgStationsRepository(sql),
    stationEvents: createPgStationEventsRepository(sql),
    checkIns: createPgCheckInsRepository(sql),
    attendees: createPgAttendeesRepository(sql),
    attendeeChips: createPgAttendeeChipsRepository(sql),
    attendeeImports: createPgAttendeeImportsRepository(sql),
    doorLog: createPgDoorLogRepository(sql),
    kioskTokens: createPgKioskTokensRepository(sql),
    staffAuth: createPgStaffAuthRepository(sql),
    consoleAuth: createPgConsoleAuthRepository(sql),
    tapLog: createPgTapLogRepository(sql),
    provisioning: createPgProvisioningRepository(sql),
  } as Repositories
}
