// The TypeScript language service's find-references for named definitions.
//
//   echo '{"root": DIR, "targets": ["lib/core/Axios.js::Axios.request", ...]}' \
//     | NODE_PATH=<folder>/node_modules node tsrefs.js
//
// Every .ts/.tsx/.js/.mjs/.cjs file under DIR (node_modules and dist excluded) is one
// program (allowJs, no type checking). A target is PATH::NAME or PATH::CLASS.MEMBER: a
// class, function, `const` or class member declared in PATH (the last one of that name:
// the implementation after overload signatures). Its references are the entries of the
// referenced-symbol groups (`findReferences`) of the target itself and of its aliases
// (imports, re-exports); for a function or class also the object-literal properties that
// name it (`export default {forEach}` makes `utils.forEach()` a reference). For a class
// member, the groups of base or derived declarations (an interface member it implements,
// an override) are other symbols and left out. Declarations of the same name are left out; each other
// entry is labelled `import` (import/export specifiers), `call` (the callee of a call or
// `new`) or `reference`. Lines and columns are 1-based.
"use strict";
const fs = require("fs");
const path = require("path");
const ts = require("typescript");

const request = JSON.parse(fs.readFileSync(0, "utf8"));
const root = path.resolve(request.root);
const EXT = /\.(ts|tsx|js|mjs|cjs)$/;

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name === "dist" || e.name.startsWith(".")) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (EXT.test(e.name)) out.push(p);
  }
  return out;
}

const files = walk(root, []);
const options = {
  allowJs: true, checkJs: false, noEmit: true, target: ts.ScriptTarget.ES2020,
  module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2020.d.ts", "lib.dom.d.ts"], skipLibCheck: true, esModuleInterop: true,
  resolveJsonModule: true,
};
const texts = new Map();
const read = (f) => {
  if (!texts.has(f)) texts.set(f, fs.existsSync(f) ? fs.readFileSync(f, "utf8") : undefined);
  return texts.get(f);
};
const host = {
  getScriptFileNames: () => files,
  getScriptVersion: () => "1",
  getScriptSnapshot: (f) => {
    const t = read(f);
    return t === undefined ? undefined : ts.ScriptSnapshot.fromString(t);
  },
  getCurrentDirectory: () => root,
  getCompilationSettings: () => options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: (f) => fs.existsSync(f),
  readFile: (f) => read(f),
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());
const program = service.getProgram();

function nameOf(node) {
  return node.name && ts.isIdentifier(node.name) ? node.name.text : undefined;
}

function findDeclaration(sf, qual) {
  const [first, member] = qual.split(".");
  let found;
  const all = [];
  const visit = (node) => {
    const n = nameOf(node);
    if (member === undefined) {
      if ((ts.isClassDeclaration(node) || ts.isFunctionDeclaration(node) ||
           ts.isVariableDeclaration(node)) && n === first) found = node.name;
    } else if (ts.isClassDeclaration(node) && n === first) {
      for (const m of node.members) if (nameOf(m) === member) { found = m.name; all.push(m.name); }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return [found, all];
}

function tokenAt(sf, pos) {
  let hit;
  const visit = (node) => {
    if (pos < node.getStart(sf) || pos >= node.getEnd()) return;
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) hit = node;
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return hit;
}

const DECLS = new Set([
  ts.SyntaxKind.MethodDeclaration, ts.SyntaxKind.MethodSignature,
  ts.SyntaxKind.FunctionDeclaration, ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.PropertyDeclaration, ts.SyntaxKind.PropertySignature,
  ts.SyntaxKind.GetAccessor, ts.SyntaxKind.SetAccessor,
]);

function kindOf(node) {
  const p = node.parent;
  if (!p) return "reference";
  if (DECLS.has(p.kind) && p.name === node) return "declaration";
  for (let a = p; a; a = a.parent) {
    if (ts.isImportDeclaration(a) || ts.isExportDeclaration(a) ||
        ts.isImportEqualsDeclaration(a)) return "import";
    if (ts.isStatement(a)) break;
  }
  let callee = node;
  if ((ts.isPropertyAccessExpression(p) || ts.isPropertyAccessChain?.(p)) && p.name === node) {
    callee = p;
  }
  const c = callee.parent;
  if (c && (ts.isCallExpression(c) || ts.isNewExpression(c)) && c.expression === callee) {
    return "call";
  }
  return "reference";
}

function rel(f) {
  return path.relative(root, f).split(path.sep).join("/");
}

const out = { version: ts.version, targets: [] };
for (const spec of request.targets) {
  const [file, qual] = spec.split("::");
  const abs = path.join(root, file);
  const sf = program.getSourceFile(abs);
  if (!sf) throw new Error(`not in the program: ${file}`);
  const [decl, overloads] = findDeclaration(sf, qual);
  const starts = new Set([decl, ...overloads].filter(Boolean).map((d) => d.getStart(sf)));
  if (!decl) throw new Error(`no declaration ${qual} in ${file}`);
  const start = decl.getStart(sf);
  const lc = sf.getLineAndCharacterOfPosition(start);
  const groups = service.findReferences(abs, start) || [];
  const isMember = qual.includes(".");
  const own = groups.filter((g) => (g.definition.fileName === abs &&
                                    starts.has(g.definition.textSpan.start)) ||
                                   g.definition.kind === "alias" || !isMember);
  const refs = [];
  const seen = new Set();
  const queue = [...own];
  const followed = new Set();
  while (queue.length) {
    const g = queue.shift();
    for (const r of g.references) {
      if (!r.fileName.startsWith(root + path.sep) || r.isInString) continue;
      const rsf = program.getSourceFile(r.fileName);
      if (r.fileName === abs && starts.has(r.textSpan.start)) continue;
      const node = tokenAt(rsf, r.textSpan.start);
      // No identifier starts there: a JSDoc `{@link X}` / `@see X` / `{X}` type in a
      // comment, or a `this` keyword (`new this()` in a static method): not code usages.
      if (!node || node.getStart(rsf) !== r.textSpan.start) continue;
      const kind = kindOf(node);
      if (kind === "declaration") continue;
      const follow = `${r.fileName}:${r.textSpan.start}`;
      if (!isMember && node && ts.isShorthandPropertyAssignment(node.parent) &&
          !followed.has(follow)) {
        // `export default {forEach}`: the property's own references (`utils.forEach()`)
        followed.add(follow);
        for (const pg of service.findReferences(r.fileName, r.textSpan.start) || []) {
          if (pg.definition.kind === "property") queue.push(pg);
        }
      }
      const p = rsf.getLineAndCharacterOfPosition(r.textSpan.start);
      const key = `${r.fileName}:${r.textSpan.start}`;
      if (seen.has(key)) continue;
      seen.add(key);
      refs.push({ path: rel(r.fileName), line: p.line + 1, column: p.character + 1, kind });
    }
  }
  out.targets.push({
    definition: { path: file, line: lc.line + 1, column: lc.character + 1 },
    references: refs,
  });
}
process.stdout.write(JSON.stringify(out));
