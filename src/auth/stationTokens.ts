import crypto from 'node:crypto'

/**
 * A station's or a kiosk's token as stored: its SHA-256, never the token. Here, beside the API
 * keys' hash, because stations/ (which issues station tokens) and kiosk/ (which issues kiosk
 * tokens) both hash with it and neither should import the other for it.
 */
export const hashStationToken = (token: string): string => crypto.createHash('sha256').update(token).digest('hex')
