import { NotificationMarks } from './notification-marks.js';

describe('NotificationMarks', () => {
  const group = (id: string, key: string) => ({ id, key });

  it('marks some groups up to their key: a group that grows past its mark is unseen again', () => {
    const marks = new NotificationMarks();
    marks.apply({ mark: 'seen', groups: [{ id: 'g1', upTo: 'k2' }] });
    expect(marks.isSeen(group('g1', 'k2'))).toBe(true);
    expect(marks.isSeen(group('g1', 'k3'))).toBe(false);
    expect(marks.isSeen(group('g2', 'k1'))).toBe(false);
    expect(marks.isRead(group('g1', 'k2'))).toBe(false);
  });

  it('marks every group up to a key with all; read marks seen too; applied twice or late, it changes nothing', () => {
    const marks = new NotificationMarks();
    marks.apply({ mark: 'seen', groups: [{ id: 'g9', upTo: 'k9' }, { id: 'g1', upTo: 'k1' }] });
    marks.apply({ mark: 'read', all: 'k5' });
    marks.apply({ mark: 'read', all: 'k5' });
    marks.apply({ mark: 'read', all: 'k3' });
    expect(marks.read.all).toBe('k5');
    expect([marks.isRead(group('gx', 'k5')), marks.isSeen(group('gx', 'k4')), marks.isRead(group('gx', 'k6'))]).toEqual([true, true, false]);
    // g1's own mark lies under the mark of all, and is dropped; g9's stays above it.
    expect([...marks.seen.groups.keys()]).toEqual(['g9']);
    expect(marks.isSeen(group('g9', 'k9'))).toBe(true);
    expect(marks.isRead(group('g9', 'k9'))).toBe(false);
  });

  it('marks by log position: a group formed later by an activity with an older time is unseen', () => {
    const marks = new NotificationMarks();
    marks.apply({ mark: 'seen', allAt: 50 });
    // Newest by time, but recorded before the mark: seen.
    expect(marks.isSeen({ id: 'g1', key: '2026-01-09T00:00:00.000Z|a', position: 50 })).toBe(true);
    // Backdated: its key is older than anything marked, but it was recorded after the mark.
    expect(marks.isSeen({ id: 'g2', key: '2020-01-01T00:00:00.000Z|b', position: 51 })).toBe(false);
    marks.apply({ mark: 'read', groups: [{ id: 'g2', at: 51 }] });
    expect(marks.isRead({ id: 'g2', key: '2020-01-01T00:00:00.000Z|b', position: 51 })).toBe(true);
    expect(marks.isRead({ id: 'g2', key: '2020-01-01T00:00:00.000Z|b', position: 52 })).toBe(false);
  });

  it('keeps the meaning of key marks recorded before positions, until a mark of all by position replaces them', () => {
    const marks = new NotificationMarks();
    marks.apply({ mark: 'seen', all: 'k5', groups: [{ id: 'g9', upTo: 'k9' }] });
    expect(marks.isSeen({ id: 'gx', key: 'k4', position: 70 })).toBe(true);
    marks.apply({ mark: 'seen', allAt: 60 });
    expect([marks.seen.all, marks.seen.groups.size]).toEqual([undefined, 0]);
    expect(marks.isSeen({ id: 'gx', key: 'k4', position: 70 })).toBe(false);
    expect(marks.isSeen({ id: 'g9', key: 'k9', position: 60 })).toBe(true);
  });
});
