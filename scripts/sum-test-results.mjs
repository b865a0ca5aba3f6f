// Sums the vitest JSON reports of every package and prints `N passed, M failed` as the last line.
// A test file that failed to load counts as a failure; no test at all is a failure too.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

let passed = 0
let failed = 0
let skipped = 0
const reports = []
const failures = []
// The first lines of a failure: enough to name what broke at the end of a CI log that is cut.
const firstLines = (text) =>
  String(text)
    .split('\n')
    .slice(0, 6)
    .map((line) => line.slice(0, 400))
    .join('\n      ')
for (const group of ['packages', 'apps']) {
  if (!existsSync(group)) continue
  for (const name of readdirSync(group)) {
    const file = join(group, name, 'test-results.json')
    if (!existsSync(file)) continue
    const report = JSON.parse(readFileSync(file, 'utf8'))
    const suiteFailures = report.testResults.filter(
      (r) => r.status === 'failed' && r.assertionResults.length === 0,
    ).length
    for (const result of report.testResults) {
      const where = `${group}/${name}/${relative(join(group, name), result.name)}`
      if (result.status === 'failed' && result.assertionResults.length === 0) {
        failures.push(`${where}: the file failed to load\n      ${firstLines(result.message)}`)
      }
      for (const assertion of result.assertionResults) {
        if (assertion.status !== 'failed') continue
        failures.push(`${where} > ${assertion.fullName}\n      ${firstLines(assertion.failureMessages.join('\n'))}`)
      }
    }
    passed += report.numPassedTests
    failed += report.numFailedTests + suiteFailures
    skipped += report.numPendingTests + report.numTodoTests
    reports.push(`${group}/${name}: ${report.numPassedTests} passed, ${report.numFailedTests + suiteFailures} failed`)
  }
}
if (failures.length > 0) console.log('failed:')
for (const failure of failures) console.log(`  ${failure}`)
for (const line of reports) console.log(`  ${line}`)
if (skipped > 0) console.log(`  (${skipped} skipped or todo: the house rule is none)`)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
