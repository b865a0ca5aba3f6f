// Sums the vitest JSON reports of every package and prints `N passed, M failed` as the last line.
// A test file that failed to load counts as a failure; no test at all is a failure too.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

let passed = 0
let failed = 0
let skipped = 0
const reports = []
for (const group of ['packages', 'apps']) {
  if (!existsSync(group)) continue
  for (const name of readdirSync(group)) {
    const file = join(group, name, 'test-results.json')
    if (!existsSync(file)) continue
    const report = JSON.parse(readFileSync(file, 'utf8'))
    const suiteFailures = report.testResults.filter(
      (r) => r.status === 'failed' && r.assertionResults.length === 0,
    ).length
    passed += report.numPassedTests
    failed += report.numFailedTests + suiteFailures
    skipped += report.numPendingTests + report.numTodoTests
    reports.push(`${group}/${name}: ${report.numPassedTests} passed, ${report.numFailedTests + suiteFailures} failed`)
  }
}
for (const line of reports) console.log(`  ${line}`)
if (skipped > 0) console.log(`  (${skipped} skipped or todo: the house rule is none)`)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
