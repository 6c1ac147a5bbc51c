// Golden reads of the Parquet corpora: for every file of $CORPORA/parquet-
// testing and $CORPORA/duckdb-parquet that tally reads, the CSV tally
// prints must be DuckDB's reading of the file through tally's documented
// mappings (tests/diff/oracle.mjs, parquetAnswer: DECIMAL as DOUBLE or
// VARCHAR, to_json() for lists and maps, "parent.child" struct fields, the
// UTC clock time of timestamps, ...), byte for byte.
//
//   node scripts/parquet-golden.mjs check TALLY   compare tally with the
//                                                 committed answers (no DuckDB)
//   node scripts/parquet-golden.mjs live TALLY    the same against DuckDB now,
//                                                 with the first differing row
//   node scripts/parquet-golden.mjs regen TALLY   write the answers anew
//
// tests/corpora/parquet_expected.tsv holds, per file tally reads, the row
// count and SHA-256 of DuckDB's answer (or "-" and DuckDB's error where
// DuckDB refuses the file), so check needs neither DuckDB nor megabytes of
// expected output.  tests/corpora/parquet_known.txt lists the files whose
// answers differ on purpose, each with the documented difference: such a
// file must still differ, so the list cannot go stale.  The files tally
// refuses are scripts/parquet-sweep's business.  CORPORA defaults to
// ../shared/corpora beside the clone; without it check prints a skip and
// exits 0, except under CI=true.  Prints "parquet-golden: N same, N known,
// N DuckDB refuses, N failed".
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// PARQUET_EXPECTED, PARQUET_KNOWN: other lists (the script's own tests)
const EXPECTED = process.env.PARQUET_EXPECTED || join(root, 'tests/corpora/parquet_expected.tsv');
const KNOWN = process.env.PARQUET_KNOWN || join(root, 'tests/corpora/parquet_known.txt');
const corp = process.env.CORPORA || join(root, '..', 'shared', 'corpora');
const [mode, tallyArg] = process.argv.slice(2);
const inCi = ['true', '1'].includes(process.env.CI || '');

if (!['check', 'live', 'regen'].includes(mode) || !tallyArg) {
    console.error('usage: node scripts/parquet-golden.mjs check|live|regen TALLY');
    process.exit(2);
}
const tally = tallyArg.startsWith('/') ? tallyArg : join(process.cwd(), tallyArg);

function files() {
    const out = [];
    const walk = (d) => {
        for (const e of readdirSync(d).sort()) {
            const p = join(d, e);
            if (statSync(p).isDirectory()) walk(p);
            else if (e.endsWith('.parquet')) out.push(relative(corp, p));
        }
    };
    for (const d of ['parquet-testing', 'duckdb-parquet']) {
        if (!existsSync(join(corp, d))) {
            console.log(`parquet-golden: ${join(corp, d)} not found (set CORPORA=DIR)`);
            if (inCi) { console.log('parquet-golden: 0 files (CI=true: the corpora are required)'); process.exit(1); }
            console.log('parquet-golden: skipped');
            process.exit(0);
        }
        walk(join(corp, d));
    }
    return out.sort();
}

const sha = (b) => createHash('sha256').update(b).digest('hex');
const lines = (p) => readFileSync(p, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));

// tally's CSV of file rel, or null when it refuses it.
function read(rel) {
    const r = spawnSync(tally, [join(corp, rel), '--threads', '2'], { maxBuffer: 1 << 30 });
    return r.status === 0 ? r.stdout : null;
}

const rowsOf = (b) => Math.max(0, b.toString('latin1').split('\n').length - 2);

if (mode === 'regen') {
    const { connectDuckDB, parquetAnswer } = await import('../tests/diff/oracle.mjs');
    const db = await connectDuckDB();
    await db.run("SET TimeZone = 'UTC'");
    const out = ['# DuckDB\'s reading of each Parquet corpus file tally reads (scripts/parquet-golden.mjs regen):',
                 '# PATH<TAB>ROWS<TAB>SHA-256 of the CSV in tally\'s spelling, or PATH<TAB>-<TAB>DuckDB\'s error'];
    for (const rel of files()) {
        if (read(rel) === null) continue;
        try {
            const a = Buffer.from(await parquetAnswer(db, join(corp, rel)));
            out.push(`${rel}\t${rowsOf(a)}\t${sha(a)}`);
        } catch (e) {
            out.push(`${rel}\t-\tDuckDB: ${e.message.split('\n')[0].replace(/\t/g, ' ').replaceAll(corp + '/', '').slice(0, 200)}`);
        }
    }
    writeFileSync(EXPECTED, out.join('\n') + '\n');
    console.log(`parquet-golden: ${out.length - 2} files written to ${relative(root, EXPECTED)}`);
    process.exit(0);
}

const expected = new Map(lines(EXPECTED).map((l) => { const [p, rows, h] = l.split('\t'); return [p, { rows, h }]; }));
const known = new Map(lines(KNOWN).map((l) => { const [p, why] = l.split('\t'); return [p, why]; }));
let db = null, parquetAnswer = null;
if (mode === 'live') {
    const o = await import('../tests/diff/oracle.mjs');
    db = await o.connectDuckDB();
    await db.run("SET TimeZone = 'UTC'");
    parquetAnswer = o.parquetAnswer;
}
let same = 0, knownDiff = 0, refusedByDuck = 0, failed = 0;
const fail = (rel, why) => { failed++; console.log(`parquet-golden: ${rel}: ${why}`); };
const seen = new Set();
for (const rel of files()) {
    const got = read(rel);
    if (got === null) continue;
    seen.add(rel);
    const e = expected.get(rel);
    if (!e) { fail(rel, 'tally reads it, but it has no answer (regen)'); continue; }
    if (e.rows === '-') { refusedByDuck++; continue; }
    let want = null;
    if (mode === 'live') {
        want = Buffer.from(await parquetAnswer(db, join(corp, rel)));
        if (sha(want) !== e.h) fail(rel, 'DuckDB answers otherwise than the committed answer (regen)');
    }
    const differs = sha(got) !== e.h;
    if (known.has(rel)) {
        if (differs) knownDiff++;
        else fail(rel, `listed in ${relative(root, KNOWN)} but now the same as DuckDB's answer`);
        continue;
    }
    if (!differs) { same++; continue; }
    let detail = `tally's ${rowsOf(got)} rows differ from DuckDB's ${e.rows}`;
    if (want) {
        const g = got.toString('latin1').split('\n'), w = want.toString('latin1').split('\n');
        const i = g.findIndex((l, k) => l !== w[k]);
        detail += ` (line ${i + 1}: tally ${JSON.stringify(g[i]?.slice(0, 200))}, DuckDB ${JSON.stringify(w[i]?.slice(0, 200))})`;
    }
    fail(rel, detail);
}
for (const rel of expected.keys()) if (!seen.has(rel)) fail(rel, 'has an answer, but tally does not read it (or it is gone)');
for (const rel of known.keys()) if (!expected.has(rel)) fail(rel, `listed in ${relative(root, KNOWN)} but has no answer`);
console.log(`parquet-golden: ${same} same, ${knownDiff} known, ${refusedByDuck} DuckDB refuses, ${failed} failed`);
process.exit(failed ? 1 : 0);
