/**
 * The UTF-8 byte length of a string without `Buffer` (the contract does no I/O and loads no node
 * module): what a row text adds to a ledger's committed bytes.
 */

/**
 * The UTF-8 byte length of a string, as `Buffer.byteLength(text, 'utf8')` counts it: a lone
 * surrogate is written as U+FFFD, three bytes.
 * @category constructors
 */
export const utf8Length = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i += 1
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}
