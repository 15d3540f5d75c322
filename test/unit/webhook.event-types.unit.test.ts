import { ComposedEnum } from '../../src/shared/composed-enum';
import { endpointWants, subscribedTypes } from '../../src/webhook/webhook.rules';

/** Which events an endpoint is sent, and how its chosen types are kept (docs/webhooks.md, "Event types"). */
describe('the event types of an endpoint', () => {
  it('wants the types it names, and every type with `*`', () => {
    expect(endpointWants(['post.state_changed'], 'post.state_changed')).toBe(true);
    expect(endpointWants(['post.state_changed'], 'location.connected')).toBe(false);
    expect(endpointWants(['*'], 'location.connected')).toBe(true);
    expect(endpointWants(['*'], 'a.type_added_later')).toBe(true);
  });

  it('keeps each type once in the order given, and `*` alone when it is among them', () => {
    expect(subscribedTypes(['location.connected', 'post.state_changed', 'location.connected'])).toEqual(['location.connected', 'post.state_changed']);
    expect(subscribedTypes(['post.state_changed', '*', 'location.connected'])).toEqual(['*']);
  });

  it('lists ALL after every contributed value of the enum, whenever they are added', () => {
    const choice = new ComposedEnum<string>('UnitTestChoice', undefined, { key: 'ALL', value: '*', description: 'every one' });
    choice.add('FIRST', 'first');
    choice.add('SECOND', 'second');
    expect(Object.entries(choice.type)).toEqual([['FIRST', 'first'], ['SECOND', 'second'], ['ALL', '*']]);
    expect(() => choice.add('ALL', 'all')).toThrow('contributed twice');
  });
});
