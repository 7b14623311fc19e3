import fs from 'node:fs'
import path from 'node:path'
import { packageRoot } from './paths.js'

export const version: string = (JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version
