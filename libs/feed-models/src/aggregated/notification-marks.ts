import type { SortKey } from '@feedmill/contracts';

/** What a reader marks: `read` marks seen too. */
export type MarkKind = 'seen' | 'read';

/**
 * One marking, as its event records it: every group up to a key (`all`), or some groups
 * each up to its newest key when it was marked. Keys, not group states, are recorded: a
 * group that grows past its mark is new again, and a replay reaches the same marks whatever
 * the timeline held then.
 */
export interface MarkChange {
  mark: MarkKind;
  all?: SortKey;
  groups?: ReadonlyArray<{ id: string; upTo: SortKey }>;
}

/** Marks of one kind: a key every group at or below is marked to, and marks of single groups. */
export interface MarkState {
  all: SortKey | undefined;
  groups: Map<string, SortKey>;
}

/**
 * What one reader of a notification feed has seen and read. A group is seen (read) when its
 * newest activity's key is at or below the reader's mark of all groups, or its own mark.
 */
export class NotificationMarks {
  readonly seen: MarkState = { all: undefined, groups: new Map() };
  readonly read: MarkState = { all: undefined, groups: new Map() };

  /** Applies a marking; applying it twice changes nothing (marks only rise). */
  apply(change: MarkChange): void {
    raise(this.seen, change);
    if (change.mark === 'read') raise(this.read, change);
  }

  isSeen(group: { id: string; key: SortKey }): boolean {
    return isMarked(this.seen, group);
  }

  isRead(group: { id: string; key: SortKey }): boolean {
    return isMarked(this.read, group);
  }

  /** Whether nothing is marked: such a reader need not be kept. */
  get empty(): boolean {
    return this.seen.all === undefined && this.seen.groups.size === 0;
  }
}

function raise(state: MarkState, change: MarkChange): void {
  if (change.all !== undefined && (state.all === undefined || change.all > state.all)) {
    state.all = change.all;
    // A group's own mark at or below the mark of all says nothing more: it goes, so that a
    // reader's marks stay as few as the groups marked since its last "all".
    for (const [id, upTo] of state.groups) if (upTo <= change.all) state.groups.delete(id);
  }
  for (const { id, upTo } of change.groups ?? []) {
    if (state.all !== undefined && upTo <= state.all) continue;
    const held = state.groups.get(id);
    if (held === undefined || upTo > held) state.groups.set(id, upTo);
  }
}

function isMarked(state: MarkState, group: { id: string; key: SortKey }): boolean {
  if (state.all !== undefined && group.key <= state.all) return true;
  const upTo = state.groups.get(group.id);
  return upTo !== undefined && group.key <= upTo;
}
