import type { Location } from '../../src/location/location.entity';
import type { PostParams } from '../../src/post/post-params.types';
import { applyParameterMask, MAX_MASK_NAMES, preparePostParams } from '../../src/post/post.rules';
import { badInput } from './refusal';

describe('a parameter mask', () => {
  it('leaves the summary as it is when there is none', () => {
    expect(applyParameterMask('Hello {name}', null, { name: 'Ada' }, 100)).toBe('Hello {name}');
    expect(applyParameterMask(undefined, '', {}, 100)).toBeUndefined();
  });

  it('replaces each masked placeholder, every time it occurs', () => {
    expect(applyParameterMask('{city}: {n} loaves, open={open}. See you in {city}!', 'city, n,,open', { city: 'Lyon', n: 12, open: true }, 100)).toBe(
      'Lyon: 12 loaves, open=true. See you in Lyon!',
    );
  });

  it('leaves placeholders the mask does not name', () => {
    expect(applyParameterMask('{a} and {b}', 'a', { a: 'x', b: 'y' }, 100)).toBe('x and {b}');
  });

  it('never searches an inserted value for placeholders', () => {
    // {a} becomes "{b}{b}", which stays as written: one pass, so no input grows the text by more than its own size.
    expect(applyParameterMask('{a}', 'a,b', { a: '{b}{b}', b: 'boom' }, 100)).toBe('{b}{b}');
  });

  it.each([
    [{}, 'parameters.city is required by parameterMask (a string or number)'],
    [{ city: null }, 'parameters.city is required by parameterMask (a string or number)'],
    [{ city: { name: 'Lyon' } }, 'parameters.city is required by parameterMask (a string or number)'],
  ])('needs a value for each masked name: %j', (parameters, message) => {
    expect(() => applyParameterMask('In {city}', 'city', parameters, 100)).toThrow(badInput(message));
  });

  it('takes only the parameters own values', () => {
    // `toString` is on every object's prototype, not a parameter the caller sent.
    expect(() => applyParameterMask('{toString}', 'toString', {}, 100)).toThrow(badInput('parameters.toString is required by parameterMask (a string or number)'));
  });

  it('names each placeholder once', () => {
    expect(() => applyParameterMask('{a}', 'a, b, a', { a: '1', b: '2' }, 100)).toThrow(badInput('parameterMask names a more than once'));
  });

  it(`names at most ${MAX_MASK_NAMES} placeholders`, () => {
    const names = (count: number) => Array.from({ length: count }, (_, i) => `p${i}`);
    const values = Object.fromEntries(names(MAX_MASK_NAMES + 1).map((name) => [name, 'v']));
    expect(applyParameterMask('{p0}', names(MAX_MASK_NAMES).join(','), values, 100)).toBe('v');
    expect(() => applyParameterMask('{p0}', names(MAX_MASK_NAMES + 1).join(','), values, 100)).toThrow(
      badInput(`parameterMask may name at most ${MAX_MASK_NAMES} placeholders`),
    );
  });

  it('refuses a result longer than the limit', () => {
    const message = 'params.summary must be at most 9 characters after placeholders are replaced';
    // "{n}{n}!" with n = "abcd" is "abcdabcd!": 9 characters, the limit.
    expect(applyParameterMask('{n}{n}!', 'n', { n: 'abcd' }, 9)).toBe('abcdabcd!');
    expect(() => applyParameterMask('{n}{n}!', 'n', { n: 'abcde' }, 9)).toThrow(badInput(message));
    // A placeholder left in place counts as written.
    expect(() => applyParameterMask('{n}{other}', 'n', { n: '' }, 6)).toThrow(
      badInput('params.summary must be at most 6 characters after placeholders are replaced'),
    );
  });
});

describe('post params', () => {
  const now = new Date('2031-02-03T10:00:00Z');
  const website: Pick<Location, 'websiteUri'> = { websiteUri: 'https://bakery.example/' };
  const noWebsite: Pick<Location, 'websiteUri'> = { websiteUri: null };
  const prepare = (params: Partial<PostParams>, options: { useLocationWebsiteUrl?: boolean; parameterMask?: string; parameters?: Record<string, unknown> } = {}, location = website) =>
    preparePostParams({ params: params, ...options }, location, now);
  const schedule = { startDate: { year: 2031, month: 3, day: 1 }, endDate: { year: 2031, month: 3, day: 2 } };

  it('are a STANDARD post by default, which needs a summary', () => {
    expect(prepare({ summary: 'Fresh bread' })).toEqual({ params: { summary: 'Fresh bread', topicType: 'STANDARD' }, scheduledTime: null });
    expect(() => prepare({ summary: '   ' })).toThrow(badInput('params.summary is required for STANDARD posts'));
    expect(() => prepare({ topicType: 'STANDARD' })).toThrow(badInput('params.summary is required for STANDARD posts'));
  });

  it('apply the parameter mask to the summary, within 1500 characters', () => {
    expect(prepare({ summary: 'Open in {city}' }, { parameterMask: 'city', parameters: { city: 'Lyon' } }).params.summary).toBe('Open in Lyon');
    // "{x}" and 1497 more characters: 1500 with a 3-character value, 1501 with a 4-character one.
    const longest = `{x}${'.'.repeat(1497)}`;
    expect(prepare({ summary: longest }, { parameterMask: 'x', parameters: { x: 'abc' } }).params.summary).toHaveLength(1500);
    expect(() => prepare({ summary: longest }, { parameterMask: 'x', parameters: { x: 'abcd' } })).toThrow(
      badInput('params.summary must be at most 1500 characters after placeholders are replaced'),
    );
  });

  it.each([
    [{ topicType: 'EVENT', event: { title: 'Tasting' } }, 'params.event.schedule is required for EVENT posts'],
    [{ topicType: 'OFFER' }, 'params.event.schedule is required for OFFER posts'],
    [{ topicType: 'EVENT', event: { schedule } }, 'params.event.title is required for EVENT posts'],
    [{ topicType: 'EVENT', event: { title: 'Tasting', schedule: { ...schedule, startDate: { year: 2031, month: 2, day: 29 } } } }, 'params.event.schedule.startDate is not a date that exists'],
    [{ topicType: 'OFFER', event: { schedule: { ...schedule, endDate: { year: 2031, month: 4, day: 31 } } } }, 'params.event.schedule.endDate is not a date that exists'],
    [{ topicType: 'ALERT', summary: 'Closed' }, 'params.alertType is required for ALERT posts'],
  ])('follow the topic type rules: %j', (params, message) => {
    expect(() => prepare(params as Partial<PostParams>)).toThrow(badInput(message));
  });

  it('accept an event, an offer and an alert with what they need', () => {
    expect(prepare({ topicType: 'EVENT', event: { title: 'Tasting', schedule } }).params.event).toEqual({ title: 'Tasting', schedule });
    // An offer needs no summary; 29 February exists in 2032.
    const leapDay = { startDate: { year: 2032, month: 2, day: 29 }, endDate: { year: 2032, month: 2, day: 29 } };
    expect(prepare({ topicType: 'OFFER', event: { schedule: leapDay } }).params.topicType).toBe('OFFER');
    expect(prepare({ topicType: 'ALERT', alertType: 'COVID_19' }).params.alertType).toBe('COVID_19');
  });

  describe('call to action', () => {
    it('has a URL except for CALL', () => {
      expect(prepare({ summary: 'Hi', callToAction: { actionType: 'CALL' } }).params.callToAction).toEqual({ actionType: 'CALL' });
      expect(() => prepare({ summary: 'Hi', callToAction: { actionType: 'CALL', url: 'https://bakery.example/' } })).toThrow(
        badInput('params.callToAction.url must be absent for CALL'),
      );
      expect(() => prepare({ summary: 'Hi', callToAction: { actionType: 'BOOK' } })).toThrow(badInput('params.callToAction.url is required for BOOK'));
    });

    it('takes the location website when asked, LEARN_MORE unless an action is given', () => {
      expect(prepare({ summary: 'Hi' }, { useLocationWebsiteUrl: true }).params.callToAction).toEqual({ actionType: 'LEARN_MORE', url: 'https://bakery.example/' });
      expect(prepare({ summary: 'Hi', callToAction: { actionType: 'ORDER', url: 'https://elsewhere.example/' } }, { useLocationWebsiteUrl: true }).params.callToAction).toEqual({
        actionType: 'ORDER',
        url: 'https://bakery.example/',
      });
      expect(() => prepare({ summary: 'Hi' }, { useLocationWebsiteUrl: true }, noWebsite)).toThrow(
        badInput('use_location_website_url is true but the location has no website'),
      );
      // A CALL button has no URL, the location's website included.
      expect(() => prepare({ summary: 'Hi', callToAction: { actionType: 'CALL' } }, { useLocationWebsiteUrl: true })).toThrow(
        badInput('params.callToAction.url must be absent for CALL'),
      );
    });
  });

  describe('scheduled time', () => {
    it('is an RFC 3339 time in the future, stored in UTC', () => {
      const { params, scheduledTime } = prepare({ summary: 'Hi', scheduledTime: '2031-02-03T12:00:00.001+02:00' });
      // 12:00:00.001 at +02:00 is 10:00:00.001 UTC: one millisecond after now.
      expect(scheduledTime).toEqual(new Date('2031-02-03T10:00:00.001Z'));
      expect(params.scheduledTime).toBe('2031-02-03T10:00:00.001Z');
    });

    it('is refused at or before now', () => {
      expect(() => prepare({ summary: 'Hi', scheduledTime: '2031-02-03T10:00:00Z' })).toThrow(badInput('params.scheduledTime must be in the future'));
      expect(() => prepare({ summary: 'Hi', scheduledTime: '2020-01-01T00:00:00Z' })).toThrow(badInput('params.scheduledTime must be in the future'));
    });

    it.each(['2031-02-30T10:00:00Z', '2031-02-04', 'tomorrow'])('is refused when it is not a time that exists: %s', (scheduledTime) => {
      expect(() => prepare({ summary: 'Hi', scheduledTime })).toThrow(badInput('params.scheduledTime must be an RFC 3339 timestamp of a time that exists'));
    });
  });

  it('keep only the fields given, at every level, and leave the input as it was', () => {
    const params = { summary: 'Hi', languageCode: null, media: [{ mediaFormat: 'PHOTO', sourceUrl: 'https://bakery.example/a.jpg' }], callToAction: { actionType: 'CALL', url: null } } as Partial<PostParams>;
    const copy = structuredClone(params);
    expect(prepare(params).params).toEqual({
      summary: 'Hi',
      topicType: 'STANDARD',
      media: [{ mediaFormat: 'PHOTO', sourceUrl: 'https://bakery.example/a.jpg' }],
      callToAction: { actionType: 'CALL' },
    });
    expect(Object.keys(prepare(params).params.callToAction!)).toEqual(['actionType']);
    expect(params).toEqual(copy);
  });
});
