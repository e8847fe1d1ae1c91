/**
 * The semaphores that bound a cluster's requests in flight: FairSemaphore (slots shared between lanes, one
 * lane per collector, served in turn) and Semaphore (first come, first served, built on it).
 */

/** A counting semaphore: at most `limit` holders; waiters are served first come, first served. */
export class Semaphore {
  private readonly fair: FairSemaphore;
  constructor(limit: number) {
    this.fair = new FairSemaphore(limit, limit);
  }
  acquire(signal?: AbortSignal): Promise<() => void> {
    return this.fair.acquire('', signal);
  }
  get inFlight(): number {
    return this.fair.inFlight;
  }
  get waiting(): number {
    return this.fair.waiting;
  }
}

interface Lane {
  active: number;
  readonly queue: Array<() => void>;
}

/**
 * The per-cluster bound on requests in flight (`concurrency`, Couchbase's protection), shared fairly between
 * lanes: one lane per collector. Every collector polls through the same cluster's slots; first come, first
 * served let one collector whose endpoint hangs fill every slot with requests held until their timeout, and
 * every other collector's poll then missed its deadline waiting (`npm run chaos`: one hang on
 * /settings/security/:service failed seven collectors). Here a lane holds at most `laneCap` slots (default:
 * half, rounded up), so the others always keep slots a hang cannot take, and a freed slot goes to the next
 * lane with a waiter in turn (round-robin), so a collector that fans out hundreds of requests cannot starve
 * one that needs three. The cap holds even when no other lane is waiting: a slot cannot be taken back from a
 * hanging request, so the reserve must already be free when a neighbour arrives. The cost: one collector
 * alone gets at most half the slots (an XDCR fan-out takes about twice as long with nothing else polling).
 */
export class FairSemaphore {
  private active = 0;
  private queued = 0;
  private readonly lanes = new Map<string, Lane>();
  /** Lanes with waiters, in the order they are served. */
  private readonly turn: string[] = [];
  readonly laneCap: number;
  constructor(
    readonly limit: number,
    laneCap?: number,
  ) {
    this.laneCap = Math.max(1, Math.min(limit, laneCap ?? Math.ceil(limit / 2)));
  }

  async acquire(laneName: string, signal?: AbortSignal): Promise<() => void> {
    const lane = this.lane(laneName);
    if (lane.queue.length === 0 && this.active < this.limit && lane.active < this.capOf(laneName)) {
      this.take(lane);
      return this.releaser(laneName, lane);
    }
    await new Promise<void>((resolve, reject) => {
      // Called by dispatch() with the slot already taken for this lane.
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = lane.queue.indexOf(grant);
        if (i >= 0) {
          lane.queue.splice(i, 1);
          this.queued--;
          if (lane.queue.length === 0) this.leaveTurn(laneName);
          this.forget(laneName, lane);
        }
        reject(signal?.reason ?? new Error('aborted'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      lane.queue.push(grant);
      this.queued++;
      if (!this.turn.includes(laneName)) this.turn.push(laneName);
    });
    return this.releaser(laneName, lane);
  }

  /**
   * The unnamed lane ('') is the client used outside a poll (the reachability probe, `cbwatch check`'s own
   * calls, tests): one caller, so it may use every slot.
   */
  private capOf(name: string): number {
    return name === '' ? this.limit : this.laneCap;
  }

  private lane(name: string): Lane {
    let l = this.lanes.get(name);
    if (!l) {
      l = { active: 0, queue: [] };
      this.lanes.set(name, l);
    }
    return l;
  }

  private take(lane: Lane): void {
    this.active++;
    lane.active++;
  }

  private releaser(name: string, lane: Lane): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active--;
      lane.active--;
      this.dispatch();
      this.forget(name, lane);
    };
  }

  /** Hands free slots to waiting lanes in turn, skipping a lane at its cap. */
  private dispatch(): void {
    while (this.active < this.limit) {
      const i = this.turn.findIndex((n) => {
        const l = this.lanes.get(n);
        return l !== undefined && l.queue.length > 0 && l.active < this.capOf(n);
      });
      if (i < 0) return;
      const name = this.turn[i] as string;
      const lane = this.lanes.get(name) as Lane;
      // Served: to the back of the turn, or out of it when nothing else of this lane waits.
      this.turn.splice(i, 1);
      const grant = lane.queue.shift() as () => void;
      this.queued--;
      if (lane.queue.length > 0) this.turn.push(name);
      this.take(lane);
      grant();
    }
  }

  private leaveTurn(name: string): void {
    const i = this.turn.indexOf(name);
    if (i >= 0) this.turn.splice(i, 1);
  }

  /** Lanes are per collector, but nothing should grow with the names ever seen. */
  private forget(name: string, lane: Lane): void {
    if (lane.active === 0 && lane.queue.length === 0 && this.lanes.get(name) === lane) this.lanes.delete(name);
  }

  get inFlight(): number {
    return this.active;
  }
  get waiting(): number {
    return this.queued;
  }
}
