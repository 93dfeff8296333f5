/**
 * Waiting requests in one lane per account, served in turn (round robin over the lanes that have someone waiting),
 * so a flood from one account lengthens that account's wait, not the others'. Used for a local model's slots and an
 * upstream provider's connections. Round robin by request rather than deficit round robin by requested tokens: a slot
 * or a connection serves one request at a time, and `max_tokens` says little about how long it is held (often absent,
 * usually far above what is generated), so counting turns is both fairer in practice and impossible to game by asking
 * for many tokens and stopping early.
 */

export class FairQueue<Item> {
  private readonly lanes = new Map<string, Item[]>();
  /** Owners with someone waiting, in the order they are served; the first is next. */
  private readonly rotation: string[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Lanes with someone waiting. */
  get activeLanes(): number {
    return this.rotation.length;
  }

  laneLength(owner: string): number {
    return this.lanes.get(owner)?.length ?? 0;
  }

  push(owner: string, item: Item): void {
    let lane = this.lanes.get(owner);
    if (!lane) {
      lane = [];
      this.lanes.set(owner, lane);
      this.rotation.push(owner);
    }
    lane.push(item);
    this.count++;
  }

  /** The next item in turn: the first of the next lane, which then goes to the back of the rotation. */
  shift(): Item | undefined {
    return this.rotation.length === 0 ? undefined : this.takeFrom(0);
  }

  /**
   * The next item in turn among the lanes `eligible` accepts (an owner at its share waits for its turn to come
   * again); the lanes passed over keep their places.
   */
  shiftEligible(eligible: (owner: string) => boolean): Item | undefined {
    for (let position = 0; position < this.rotation.length; position++) {
      if (eligible(this.rotation[position] as string)) return this.takeFrom(position);
    }
    return undefined;
  }

  /** The first item of the lane at `position` in the rotation; the lane goes to the back if it has more. */
  private takeFrom(position: number): Item {
    const [owner] = this.rotation.splice(position, 1) as [string];
    const lane = this.lanes.get(owner) as Item[];
    const item = lane.shift() as Item;
    this.count--;
    if (lane.length > 0) this.rotation.push(owner);
    else this.lanes.delete(owner);
    return item;
  }

  /** Takes an item out wherever it waits (its client left, or it waited too long). */
  remove(owner: string, item: Item): boolean {
    const lane = this.lanes.get(owner);
    const index = lane?.indexOf(item) ?? -1;
    if (!lane || index === -1) return false;
    lane.splice(index, 1);
    this.count--;
    if (lane.length === 0) this.dropLane(owner);
    return true;
  }

  /** The owner with the most waiting (the first such in turn), when it has more than `than`. */
  longestLane(than: number): string | undefined {
    let longest: string | undefined;
    let length = than;
    for (const owner of this.rotation) {
      const laneLength = this.laneLength(owner);
      if (laneLength > length) {
        longest = owner;
        length = laneLength;
      }
    }
    return longest;
  }

  /** The newest item of a lane, taken out (to make room for an account with fewer waiting). */
  popNewest(owner: string): Item | undefined {
    const lane = this.lanes.get(owner);
    const item = lane?.pop();
    if (!lane || item === undefined) return undefined;
    this.count--;
    if (lane.length === 0) this.dropLane(owner);
    return item;
  }

  /** Every item, emptying the queue. */
  drain(): Item[] {
    const items = [...this.lanes.values()].flat();
    this.lanes.clear();
    this.rotation.length = 0;
    this.count = 0;
    return items;
  }

  private dropLane(owner: string): void {
    this.lanes.delete(owner);
    const position = this.rotation.indexOf(owner);
    if (position !== -1) this.rotation.splice(position, 1);
  }
}
