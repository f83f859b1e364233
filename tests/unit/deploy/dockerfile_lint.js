// SPDX-License-Identifier: Apache-2.0
// Lints a Dockerfile with dockerfile-utils (npm): syntax, flags, instruction arguments, stage names.
// Every diagnostic is a finding (warnings included). Usage: node dockerfile_lint.js TOOLS_DIR FILE
'use strict';
const fs = require('fs');
const path = require('path');
const [toolsDir, file] = process.argv.slice(2);
const { validate } = require(path.join(toolsDir, 'node_modules', 'dockerfile-utils'));
const text = fs.readFileSync(file, 'utf8');
// Strictest settings: every optional rule reported as an error.
const all = {
  deprecatedMaintainer: 'error', directiveCasing: 'error', emptyContinuationLine: 'error',
  instructionCasing: 'error', instructionCmdMultiple: 'error', instructionEntrypointMultiple: 'error',
  instructionHealthcheckMultiple: 'error', instructionJSONInSingleQuotes: 'error',
  instructionWorkdirRelative: 'error',
};
const diags = validate(text, all);
for (const d of diags) {
  console.log(`${file}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${d.message} (code ${d.code})`);
}
console.log(`dockerfile-utils: ${diags.length} finding(s)`);
process.exit(diags.length ? 1 : 0);
