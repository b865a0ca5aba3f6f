import { describe, expect, it } from 'vitest'
import { normalizeCwd, sameCwd } from '../src/index.js'

describe('normalizeCwd', () => {
  it.each([
    ['/work/project', '/work/project'],
    ['/work/project/', '/work/project'],
    ['/work/project///', '/work/project'],
    ['/', '/'],
    ['//', '/'],
    ['C:/work/', 'C:/work'],
  ])('turns %j into %j', (given, expected) => {
    expect(normalizeCwd(given)).toBe(expected)
  })

  describe('when two cwds differ only by trailing separators', () => {
    it('holds them the same', () => {
      expect(sameCwd('/work/project/', '/work/project')).toBe(true)
      expect(sameCwd('//', '/')).toBe(true)
    })
  })

  describe('when two cwds name different folders', () => {
    it('holds them different', () => {
      expect(sameCwd('/work/project', '/work/projects')).toBe(false)
      expect(sameCwd('/work/Project', '/work/project')).toBe(false)
    })
  })
})
