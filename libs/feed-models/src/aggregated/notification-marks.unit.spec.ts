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
});
