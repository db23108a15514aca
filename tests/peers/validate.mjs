// validate.mjs SCHEMA FILE - checks FILE against a JSON Schema (draft-07),
// as the viewing tests check profdb's speedscope files against the schema
// speedscope's npm package ships.  Exit 0 valid, 1 invalid (the first
// errors printed), 2 unreadable.
import Ajv from 'ajv'
import fs from 'node:fs'

let schema, data
try {
  schema = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
  data = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'))
} catch (e) {
  console.log(`unreadable: ${e.message}`)
  process.exit(2)
}
const validate = new Ajv({ strict: false, allErrors: true }).compile(schema)
if (!validate(data)) {
  console.log(JSON.stringify(validate.errors.slice(0, 5)))
  process.exit(1)
}
console.log('valid')
