#!/usr/bin/env node
// The bin entry stays plain JavaScript so `npx tapgate` works without a build
// step: it registers tsx's loader, then runs the TypeScript CLI.
import { register } from 'tsx/esm/api'

register()
await import('./main.ts')
