// validate.cjs NODE_MODULES SCHEMA FILE - checks FILE against a JSON Schema
// (draft-07) with ajv from NODE_MODULES (tests/peers, installed by
// quickstart test), as the viewing tests check profdb's speedscope files
// against the schema speedscope's npm package ships.  Exit 0 valid,
// 1 invalid (the first errors printed), 2 unreadable.
'use strict';
const fs = require('fs');
const path = require('path');

const ajv = require(path.resolve(process.argv[2], 'ajv'));
const Ajv = ajv.default || ajv;
let schema, data;
try {
  schema = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
  data = JSON.parse(fs.readFileSync(process.argv[4], 'utf8'));
} catch (e) {
  console.log(`unreadable: ${e.message}`);
  process.exit(2);
}
const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
if (!validate(data)) {
  console.log(JSON.stringify(validate.errors.slice(0, 5)));
  process.exit(1);
}
console.log('valid');
