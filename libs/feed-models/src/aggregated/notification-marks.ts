import type { SortKey } from '@feedmill/contracts';

/** What a reader marks: `read` marks seen too. */
export type MarkKind = 'seen' | 'read';

/**
 * One marking, as its event records it: every group up to a log position (`allAt`), or some
 * groups each up to the position of its newest-recorded activity when it was marked (`at`).
 * Positions, not group states, are recorded: a group that grows past its mark is new again,
 * whatever the new activity's `time`, and a replay reaches the same marks whatever the
 * timeline held then. Markings from before positions carry sort keys (`all`, `upTo`).
 */
export interface MarkChange {
  mark: MarkKind;
  all?: SortKey;
  allAt?: number;
  groups?: ReadonlyArray<{ id: string; upTo?: SortKey; at?: number }>;
}

/**
 * Marks of one kind: a log position every group recorded at or below is marked to, and
 * positions of single groups; and the sort-key marks of markings recorded before positions.
 */
export interface MarkState {
  allAt: number | undefined;
  groupsAt: Map<string, number>;
  all: SortKey | undefined;
  groups: Map<string, SortKey>;
}

/** A group as marks see it: its id, its newest activity's key, and the log position of its newest-recorded activity (unknown: none). */
export interface MarkedGroup {
  id: string;
  key: SortKey;
  position?: number | undefined;
}

/**
 * What one reader of a notification feed has seen and read. A group is seen (read) when
 * every activity of it was recorded in the log at or before the reader's mark of all groups,
 * or its own mark (or, for markings recorded before positions, when its newest activity's
 * key is at or below theirs).
 */
export class NotificationMarks {
  readonly seen: MarkState = emptyState();
  readonly read: MarkState = emptyState();

  /** Applies a marking; applying it twice changes nothing (marks only rise). */
  apply(change: MarkChange): void {
    raise(this.seen, change);
    if (change.mark === 'read') raise(this.read, change);
  }

  isSeen(group: MarkedGroup): boolean {
    return isMarked(this.seen, group);
  }

  isRead(group: MarkedGroup): boolean {
    return isMarked(this.read, group);
  }

  /** Whether nothing is marked: such a reader need not be kept. */
  get empty(): boolean {
    return this.seen.all === undefined && this.seen.groups.size === 0 && this.seen.allAt === undefined && this.seen.groupsAt.size === 0;
  }
}

function emptyState(): MarkState {
  return { allAt: undefined, groupsAt: new Map(), all: undefined, groups: new Map() };
}

function raise(state: MarkState, change: MarkChange): void {
  if (change.allAt !== undefined && (state.allAt === undefined || change.allAt > state.allAt)) {
    state.allAt = change.allAt;
    // A group's own mark at or below the mark of all says nothing more: it goes, so that a
    // reader's marks stay as few as the groups marked since its last "all".
    for (const [id, at] of state.groupsAt) if (at <= change.allAt) state.groupsAt.delete(id);
    // Every activity a sort-key mark covered was recorded before this mark: those marks say
    // nothing more, and left in place they would mark a backdated activity seen.
    state.all = undefined;
    state.groups.clear();
  }
  if (change.all !== undefined && (state.all === undefined || change.all > state.all)) {
    state.all = change.all;
    for (const [id, upTo] of state.groups) if (upTo <= change.all) state.groups.delete(id);
  }
  for (const { id, upTo, at } of change.groups ?? []) {
    if (at !== undefined && (state.allAt === undefined || at > state.allAt)) {
      const held = state.groupsAt.get(id);
      if (held === undefined || at > held) state.groupsAt.set(id, at);
    }
    if (upTo !== undefined && (state.all === undefined || upTo > state.all)) {
      const held = state.groups.get(id);
      if (held === undefined || upTo > held) state.groups.set(id, upTo);
    }
  }
}

function isMarked(state: MarkState, group: MarkedGroup): boolean {
  if (group.position !== undefined) {
    if (state.allAt !== undefined && group.position <= state.allAt) return true;
    const at = state.groupsAt.get(group.id);
    if (at !== undefined && group.position <= at) return true;
  }
  if (state.all !== undefined && group.key <= state.all) return true;
  const upTo = state.groups.get(group.id);
  return upTo !== undefined && group.key <= upTo;
}
