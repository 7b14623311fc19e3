/*
 * The context each sealed key is bound to (sealKey's additional data): a key copied into another row
 * or column no longer opens. Named here, beside sealKey, because the keyring (taps/), the profiles
 * (profiles/) and a provisioning run (provisioning/run/) all seal or open by them.
 */

export const profileKeyContext = (id: number, slot: 'meta' | 'file' | 'master') => `profile:${id}:${slot}`
export const chipKeyContext = (uid: string) => `chip:${uid}:file`
