/*
 * tapgate/client stays light: a program that only talks to a gateway must not load Fastify, the store or
 * the chain code to do it. Read with the TypeScript parser, statically: the modules src/client/index.ts
 * loads at run time (type-only imports are erased), and what src/client/ names at all, types included.
 * npm run lint:deps checks the direct imports too (.dependency-cruiser.cjs, client-imports-schemas-only).
 */
import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { expect, test } from 'vitest'
import { repoRoot } from '../helpers/processes.js'

type Import = { specifier: string; typeOnly: boolean }

/** The imports and re-exports of a module, each marked type-only when TypeScript erases it. */
function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const found: Import[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined
      // `import type …`, or `import { type A, type B }` with no default: erased. A bare `import 'x'` runs.
      const typeOnly = clause !== undefined && (clause.isTypeOnly || (clause.name === undefined && named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly)))
      found.push({ specifier: node.moduleSpecifier.text, typeOnly })
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly || (named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly)) })
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false })
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** A relative specifier as the repository file it names (`./x.js` is `./x.ts`); a package's name as it is. */
const resolve = (from: string, specifier: string): string =>
  specifier.startsWith('.') ? path.relative(repoRoot, path.resolve(path.dirname(path.join(repoRoot, from)), specifier.replace(/\.js$/, '.ts'))) : specifier

/** Every module `entry` loads at run time, its packages (bare specifiers) included. */
function runtimeClosure(entry: string): string[] {
  const seen = new Set<string>([entry])
  const pending = [entry]
  while (pending.length > 0) {
    const file = pending.pop()!
    for (const { specifier, typeOnly } of importsOf(path.join(repoRoot, file))) {
      if (typeOnly) continue
      const target = resolve(file, specifier)
      if (seen.has(target)) continue
      seen.add(target)
      if (specifier.startsWith('.')) pending.push(target)
    }
  }
  return [...seen].sort()
}

const clientFiles = fs
  .readdirSync(path.join(repoRoot, 'src/client'))
  .filter((name) => name.endsWith('.ts'))
  .map((name) => `src/client/${name}`)

test("src/client/index.ts loads only src/client/ at run time: no zod, no schema, no Fastify, no store", () => {
  const loaded = runtimeClosure('src/client/index.ts')
  expect(loaded.filter((module) => !module.startsWith('src/client/'))).toEqual([])
  expect(loaded).toEqual(expect.arrayContaining(['src/client/index.ts', 'src/client/createClient.ts', 'src/client/apiError.ts']))
})

test('src/client/ names only src/client/, src/schemas/ and zod, types included', () => {
  expect(clientFiles).toContain('src/client/operations.ts')
  const outside = clientFiles.flatMap((file) =>
    importsOf(path.join(repoRoot, file))
      .map(({ specifier }) => resolve(file, specifier))
      .filter((target) => !/^src\/(client|schemas)\//.test(target) && target !== 'zod')
      .map((target) => `${file} -> ${target}`),
  )
  expect(outside).toEqual([])
})

/**
 * The table itself (for a tool or test that reads the schemas at run time) loads the schemas and what
 * they load: zod, viem/utils (Address's checksum) and the value lists db/ keeps so a CHECK constraint
 * and an API enum are one list (otpTypes, proofEventStatuses, searchText). Those modules import
 * nothing of ours at run time; neither Fastify nor the store is reached.
 */
test('the operations table loads the schemas and their leaves only', () => {
  const loaded = runtimeClosure('src/client/operations.ts')
  const leaves = loaded.filter((module) => !/^src\/(client|schemas)\//.test(module))
  expect(leaves).toEqual(['src/db/attendees.ts', 'src/db/otps.ts', 'src/db/proofEvents.ts', 'viem/utils', 'zod'])
})
