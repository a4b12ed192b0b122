import type { Reporter, TestModule } from "vitest/node"

// Prints one plain closing line, "tests: N passed, N failed, N skipped", that log readers
// (and people skimming CI output) can rely on whatever the default reporter's layout.
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    let brokenFiles = 0
    for (const module of testModules) {
      let failedHere = 0
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failedHere++
        else skipped++
      }
      failed += failedHere
      if (module.state() === "failed" && module.children.size === 0) failed++
      // A file whose setup (beforeAll) failed leaves its tests "skipped": the file is broken.
      else if (module.state() === "failed" && failedHere === 0) brokenFiles++
    }
    const broken = brokenFiles > 0 ? `, ${brokenFiles} file(s) failed outside a test (setup or teardown)` : ""
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped${broken}\n`)
  }
}
