import { nanoid } from 'nanoid'

/** Ref ids and OTP codes: 21 URL-safe characters from the CSPRNG (126 bits). */
export const newPublicId = (): string => nanoid(21)

export const iso = (ms: number): string => new Date(ms).toISOString()
