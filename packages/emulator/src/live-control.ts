import type { EarthquakeEvent } from './spec.js';
import {
  checkLiveWindow,
  type LiveCatalog,
  type LiveChange,
  type LiveCounts,
  type LiveWindow,
} from './live-catalog.js';
import { LiveTimer, resolveLiveSpec, type LiveSpec, type ResolvedLiveSpec } from './live-timer.js';

/** The live-catalog part of the running emulator's handle. */
export interface LiveControl {
  startLive(spec?: LiveSpec): void;
  stopLive(): void;
  mutate(counts: LiveCounts, window?: LiveWindow): LiveChange[];
  currentEvents(): EarthquakeEvent[];
  changes: LiveChange[];
}

/** The live window as given (checked), or the span of the file and swarm events at this moment. */
function resolveWindow(window: LiveWindow | undefined, catalog: LiveCatalog): LiveWindow {
  const { fromMs, toMs } = window ? checkLiveWindow(window) : catalog.sourceWindow();
  return { from: new Date(fromMs), to: new Date(toMs) };
}

/** `option` is the emulator's `live` option, used by `startLive()` without a spec. */
export function liveControl(catalog: LiveCatalog, option: ResolvedLiveSpec | null): LiveControl {
  const timer = new LiveTimer((counts, window) => catalog.mutate(counts, window));
  return {
    startLive(spec) {
      const resolved = spec ? resolveLiveSpec(spec) : option;
      if (!resolved) throw new RangeError('startLive: no live spec given and no live option set');
      catalog.assertUntiled();
      // Fixed now, so that a tick never depends on (or fails for) a later setSwarms.
      timer.start(resolved, resolveWindow(resolved.window, catalog));
    },
    stopLive() {
      timer.stop();
    },
    mutate(counts, window) {
      return catalog.mutate(counts, window);
    },
    currentEvents() {
      return catalog.currentEvents();
    },
    changes: catalog.changes,
  };
}
