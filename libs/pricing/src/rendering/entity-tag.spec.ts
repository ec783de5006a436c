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

  it.each<[string, string | undefined, boolean]>([
    ['matches the same weak tag', 'W/"abc"', true],
    ['matches the strong form of the tag', '"abc"', true],
    ['matches *', '*', true],
    ['matches a list containing the tag', '"x", W/"abc" ,W/"y"', true],
    ['matches a list with empty elements', ', ,W/"abc",', true],
    ['matches surrounding whitespace', '  W/"abc"\t', true],
    ['does not match another tag', 'W/"abd"', false],
    ['does not match an unquoted tag', 'W/abc', false],
    ['does not match an unterminated tag', 'W/"abc', false],
    ['does not match a lower-case weak prefix', 'w/"abc"', false],
    ['does not match garbage after a tag', 'W/"abc" x', false],
    ['does not match a malformed element beside a match', 'W/"abc", nope', false],
    ['does not match * inside a list', '*, W/"abc"', false],
    ['does not match a tag with a control character', 'W/"a\u0001bc"', false],
    ['does not match an empty header', '', false],
    ['does not match no header', undefined, false],
  ])('%s', (_, header, matches) => {
    expect(ifNoneMatchMatches(header, tag)).toBe(matches);
  });

  it('reads opaque tags that contain commas', () => {
    expect(parseEntityTagList('"a,b", W/"c"')).toEqual(['"a,b"', 'W/"c"']);
    expect(ifNoneMatchMatches('"a,b"', 'W/"a,b"')).toBe(true);
  });
});
