import { HiddenActivities } from './hidden-activities.js';

describe('HiddenActivities', () => {
  it('keeps hidings in log-position order when one arrives out of order, so that pages lose none', () => {
    const hidden = new HiddenActivities();
    hidden.hide('x', 't10', 10);
    hidden.hide('y', 't20', 20);
    // A dead letter replayed: an earlier position, applied last.
    hidden.hide('z', 't5', 5);
    const first = hidden.page(undefined, 1);
    expect(first).toEqual({ items: [{ id: 'y', time: 't20' }], next: 20 });
    const second = hidden.page(first.next!, 1);
    expect(second).toEqual({ items: [{ id: 'x', time: 't10' }], next: 10 });
    expect(hidden.page(second.next!, 1)).toEqual({ items: [{ id: 'z', time: 't5' }], next: null });
    expect([...hidden.entries()].map(([id]) => id)).toEqual(['z', 'x', 'y']);
  });

  it('puts a hiding below the highest position held after that one was shown', () => {
    const hidden = new HiddenActivities();
    hidden.hide('x', 't10', 10);
    hidden.hide('y', 't20', 20);
    hidden.show('y');
    hidden.hide('w', 't15', 15);
    hidden.hide('v', 't12', 12);
    expect(hidden.page(undefined, 10).items.map((entry) => entry.id)).toEqual(['w', 'v', 'x']);
  });
});
