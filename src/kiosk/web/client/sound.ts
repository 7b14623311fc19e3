import type { SoundName } from './states.js'

type Note = { hz: number; ms: number; wave?: OscillatorType; gain?: number }

/** Each sound differs in pitch and rhythm, so they are told apart without looking. */
const SOUNDS: Record<Exclude<SoundName, 'none'>, Note[]> = {
  tick: [{ hz: 1400, ms: 25, gain: 0.05 }],
  chime: [
    { hz: 660, ms: 110 },
    { hz: 880, ms: 110 },
    { hz: 1320, ms: 220 },
  ],
  twoTones: [
    { hz: 523, ms: 160, gain: 0.1 },
    { hz: 523, ms: 160, gain: 0.1 },
  ],
  threeLow: [
    { hz: 220, ms: 170, wave: 'square', gain: 0.08 },
    { hz: 220, ms: 170, wave: 'square', gain: 0.08 },
    { hz: 220, ms: 170, wave: 'square', gain: 0.08 },
  ],
  oneLow: [{ hz: 330, ms: 300, gain: 0.12 }],
}

let context: AudioContext | null = null
let muted = false

/** Browsers start audio suspended until a gesture (Chromium kiosks: --autoplay-policy=no-user-gesture-required). */
export function unlockAudio(): void {
  try {
    context ??= new AudioContext()
    if (context.state === 'suspended') void context.resume()
  } catch {
    // No audio device: the screen still says everything.
  }
}

export function setMuted(value: boolean): void {
  muted = value
}

export function isMuted(): boolean {
  return muted
}

/** Plays a sound as a few short tones; a gap of 60 ms between notes. */
export function play(name: SoundName): void {
  if (name === 'none' || muted) return
  unlockAudio()
  if (!context || context.state !== 'running') return
  let t = context.currentTime + 0.01
  for (const note of SOUNDS[name]) {
    const osc = context.createOscillator()
    const gain = context.createGain()
    osc.type = note.wave ?? 'sine'
    osc.frequency.value = note.hz
    // A short ramp in and out: no click at the edges.
    const peak = note.gain ?? 0.15
    gain.gain.setValueAtTime(0, t)
    gain.gain.linearRampToValueAtTime(peak, t + 0.01)
    gain.gain.linearRampToValueAtTime(0, t + note.ms / 1000)
    osc.connect(gain).connect(context.destination)
    osc.start(t)
    osc.stop(t + note.ms / 1000 + 0.02)
    t += note.ms / 1000 + 0.06
  }
}
