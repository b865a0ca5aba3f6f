/**
 * Loading a terminal UI built on ink. Ink hides its live frame (an input line, a spinner, a prompt)
 * when it sees CI variables, and it decides once, when it loads. `maka chat` and `maka resume --pick`
 * only run on a terminal, where a hidden prompt leaves the person unable to answer.
 */

/**
 * Runs `load` (an `import()` of a module that loads ink) with the CI variables out of sight; they are
 * put back before anything runs, so tools started from the screen still see them.
 * @category constructors
 */
export const withCiVariablesHidden = async <A>(load: () => Promise<A>): Promise<A> => {
  const hidden = Object.entries(process.env).filter(
    ([name]) => name === 'CI' || name === 'CONTINUOUS_INTEGRATION' || name.startsWith('CI_'),
  )
  for (const [name] of hidden) delete process.env[name]
  try {
    return await load()
  } finally {
    for (const [name, value] of hidden) process.env[name] = value
  }
}
