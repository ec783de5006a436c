import { ifNoneMatchMatches, parseEntityTagList, weakEntityTag } from './entity-tag';

describe('weakEntityTag', () => {
  it('is a weak tag that depends on the body bytes alone', () => {
    const tag = weakEntityTag(Buffer.from('{"a":1}'));
    expect(tag).toMatch(/^W\/"[A-Za-z0-9_-]{32}"$/);
    expect(weakEntityTag(Buffer.from('{"a":1}'))).toBe(tag);
    expect(weakEntityTag(Buffer.from('{"a":2}'))).not.toBe(tag);
  });
});

describe('ifNoneMatchMatches', () => {
  const tag = 'W/"abc"';

  it.each([
    ['the same weak tag', 'W/"abc"'],
    ['the strong form of the tag', '"abc"'],
    ['*', '*'],
    ['a list containing the tag', '"x", W/"abc" ,W/"y"'],
    ['a list with empty elements', ', ,W/"abc",'],
    ['surrounding whitespace', '  W/"abc"\t'],
  ])('matches %s', (_, header) => {
    expect(ifNoneMatchMatches(header, tag)).toBe(true);
  });

  it.each([
    ['no header', undefined],
    ['another tag', 'W/"abd"'],
    ['an unquoted tag', 'W/abc'],
    ['an unterminated tag', 'W/"abc'],
    ['a lower-case weak prefix', 'w/"abc"'],
    ['garbage after a tag', 'W/"abc" x'],
    ['a malformed element beside a match', 'W/"abc", nope'],
    ['* inside a list', '*, W/"abc"'],
    ['an empty header', ''],
    ['a tag with a control character', 'W/"a\u0001bc"'],
  ])('does not match %s', (_, header) => {
    expect(ifNoneMatchMatches(header, tag)).toBe(false);
  });

  it('reads opaque tags that contain commas', () => {
    expect(parseEntityTagList('"a,b", W/"c"')).toEqual(['"a,b"', 'W/"c"']);
    expect(ifNoneMatchMatches('"a,b"', 'W/"a,b"')).toBe(true);
  });
});
