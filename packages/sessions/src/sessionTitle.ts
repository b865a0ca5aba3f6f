/**
 * A session's title: its first prompt, short and on one line, so every listing can name a session
 * by what it was for instead of its id. Written once, when the session is created.
 */

/** The longest title, in characters; a longer prompt is cut at a word and ends with `…`. */
const MAX_TITLE = 60

/**
 * The title of a session whose first prompt is `prompt`: whitespace runs (newlines included) become
 * one space, and a prompt longer than 60 characters is cut at its last word boundary with `…`.
 * @category constructors
 */
export const sessionTitleOf = (prompt: string): string => {
  const line = prompt.replace(/\s+/g, ' ').trim()
  if (line.length <= MAX_TITLE) return line
  const cut = line.slice(0, MAX_TITLE - 1)
  const atWord = cut.lastIndexOf(' ')
  return `${(atWord > MAX_TITLE / 2 ? cut.slice(0, atWord) : cut).trimEnd()}…`
}
