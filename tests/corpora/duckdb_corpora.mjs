// Differential corpus check: tally's default reading of real files against
// DuckDB's auto-detecting readers (read_csv / read_json with every option
// left to the sniffer).
//
//   node tests/corpora/duckdb_corpora.mjs run TALLY [--tsv OUT]
//        classify every file, print the counts per class and the most
//        common reasons tally refuses a file DuckDB reads
//   node tests/corpora/duckdb_corpora.mjs check TALLY [--tsv OUT]
//        the same, then compare with tests/corpora/duckdb_expected.tsv:
//        fail when a file's class got worse, report the ones that got better
//   node tests/corpora/duckdb_corpora.mjs regen TALLY
//        write tests/corpora/duckdb_expected.tsv anew
//
// The files are every CSV, TSV and JSON file (.csv .tsv .tbl .json .jsonl
// .ndjson .geojson .geojsonl, also gzip- or zstd-compressed) of the corpora
// duckdb-csv, duckdb-json, csv-spectrum and rust-csv under $CORPORA (default
// ../shared/corpora), fuzzer finds excluded (paths naming fuzz, folders named afl):
// those test that a reader survives, not what it reads.  A JSON suffix goes
// to read_json, anything else to read_csv; both with hive_partitioning off
// (a `key=value` folder in the path is not a column of the file).  tally runs as `TALLY FILE`
// (CSV on stdout) with nothing but the file named, from the corpora folder
// (so messages name the path relative to it, the same on every machine).
//
// Each file gets one class, ranked from good to bad for `check`:
//   same       both read it, every value the same
//   kept       the same, except cells where DuckDB converted the text (a
//              number with a leading zero or `+`, a date or timestamp
//              spelling, a quoted empty field DuckDB reads as null) and
//              tally kept the source text verbatim
//   refuses    DuckDB reads it, tally exits 1 with a message
//   different  both read it with the same number of columns, a value or the
//              row count differs (the first difference is recorded)
//   columns    tally reads another number of columns (a wrong delimiter or
//              quote, or a ragged file padded differently)
//   crash      tally neither reads nor refuses (a signal, exit >1, a timeout)
// and, outside the ranking, `duckdb-refuses` (DuckDB fails: what tally does
// is recorded, not judged) and `duckdb-timeout` (DuckDB did not answer
// within DUCKDB_TIMEOUT seconds on this run: not compared).
// `same` and `kept` rank alike (both meet the target), so do `different`
// and `columns` (both are wrong reads); a refusal ranks above a wrong read.
//
// Cells compare as text after rendering DuckDB's value in tally's spelling
// (tests/diff/oracle.mjs); numbers compare by value (so `3` and `3.0` are
// the same, and so are `02134` and 2134, counted as kept); nested JSON
// values (lists, maps, deep structs) compare as parsed JSON, a missing key as
// null; DuckDB's structs are first flattened into parent.child columns as
// tally reads nested objects.  Column names and types are not compared.
//
// Environment: CORPORA, TALLY_TIMEOUT and DUCKDB_TIMEOUT (seconds per file,
// default 30 each), DUCKDB_EXPECTED (another expected file, for tests).
// Without the corpora or the oracle the run is skipped
// (exit 0), except under CI (CI=true), where either is a failure.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { connectDuckDB, parseCsv, render, reprFloat } from '../diff/oracle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const EXPECTED = process.env.DUCKDB_EXPECTED || join(here, 'duckdb_expected.tsv');
const CORPORA = resolve(process.env.CORPORA || join(here, '..', '..', '..', 'shared', 'corpora'));
const SETS = ['duckdb-csv', 'duckdb-json', 'csv-spectrum', 'rust-csv'];
const TALLY_TIMEOUT = Number(process.env.TALLY_TIMEOUT || 30);
const DUCKDB_TIMEOUT = Number(process.env.DUCKDB_TIMEOUT || 30);
const FILE_RE = /\.(csv|tsv|tbl|json|jsonl|ndjson|geojson|geojsonl)(\.gz|\.zst)?$/i;
const JSON_RE = /\.(json|jsonl|ndjson|geojson|geojsonl)(\.gz|\.zst)?$/i;
const RANK = { same: 0, kept: 0, refuses: 1, different: 2, columns: 2, crash: 3 };
const CLASSES = ['same', 'kept', 'refuses', 'different', 'columns', 'crash', 'duckdb-refuses', 'duckdb-timeout'];

const inCi = () => !!process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0';

// ---- the files ----
function listFiles() {
    const out = [];
    const walk = (rel) => {
        for (const name of readdirSync(join(CORPORA, rel)).sort()) {
            const r = `${rel}/${name}`;
            const st = statSync(join(CORPORA, r));
            if (st.isDirectory()) {
                if (name !== 'afl') walk(r);
            } else if (st.isFile() && FILE_RE.test(name) && !/fuzz/i.test(r)) out.push(r);
        }
    };
    for (const s of SETS) if (existsSync(join(CORPORA, s))) walk(s);
    return out.sort();
}

// sourceText: the file's text (decompressed), for the "kept" test that a
// cell of tally's is verbatim source text; null when it cannot be had.
function sourceText(path) {
    try {
        let b = readFileSync(path);
        if (/\.gz$/i.test(path)) b = gunzipSync(b);
        else if (/\.zst$/i.test(path)) {
            const p = spawnSync('zstd', ['-dc', path], { maxBuffer: 1 << 28 });
            if (p.status !== 0) return null;
            b = p.stdout;
        }
        return b.toString('utf8');
    } catch (e) {
        return null;
    }
}

// ---- DuckDB ----
const sqlString = (s) => `'${s.replaceAll("'", "''")}'`;

// plain: a DuckDB value as a plain JS value (nested ones as objects and
// arrays, numbers as numbers), for comparing JSON.
function plain(v) {
    if (v === null || v === undefined) return null;
    if (typeof v === 'bigint') return Number(v);
    if (typeof v !== 'object') return v;
    if (Array.isArray(v.items)) return v.items.map(plain);
    if (v.entries && !Array.isArray(v.entries)) {
        const o = {};
        for (const [k, x] of Object.entries(v.entries)) o[k] = plain(x);
        return o;
    }
    if (Array.isArray(v.entries)) {
        const o = {};
        for (const e of v.entries) o[String(plain(e.key))] = plain(e.value);
        return o;
    }
    return String(v);
}

const NESTED = /STRUCT|MAP|\[\]|^JSON$|\[\d+\]$/;

// leaves: the columns tally makes of a DuckDB column NAME of TYPE: a
// struct with fields is flattened into parent.child columns while the name
// has at most 8 parts (tally's NDJSON rule); anything else is one column.
function leaves(name, type, path = [], parts = 1) {
    const names = type.entryNames;
    if (Array.isArray(names) && names.length && type.entryTypes && parts < 8) {
        const out = [];
        names.forEach((n, x) => out.push(...leaves(`${name}.${n}`, type.entryTypes[x], [...path, n], parts + 1)));
        return out;
    }
    return [{ name, path, type: type.toString() }];
}

async function duckRead(con, path) {
    const json = JSON_RE.test(path);
    const fn = json ? 'read_json' : 'read_csv';
    const timer = setTimeout(() => con.interrupt(), DUCKDB_TIMEOUT * 1000);
    const t0 = Date.now();
    try {
        const r = await con.runAndReadAll(`SELECT * FROM ${fn}(${sqlString(path)}, hive_partitioning = false)`);
        const ctypes = r.columnTypes(), cnames = r.columnNames();
        const cols = [];
        cnames.forEach((n, x) => {
            for (const l of json ? leaves(n, ctypes[x]) : [{ name: n, path: [], type: ctypes[x].toString() }])
                cols.push({ ...l, x });
        });
        const value = (row, c) => {
            if (!c.path.length) {
                const v = row[c.x];
                if (NESTED.test(c.type)) return { json: c.type === 'JSON' ? (v === null ? null : JSON.parse(String(v))) : plain(v) };
                return render(v, c.type);
            }
            let v = plain(row[c.x]);
            for (const k of c.path) v = v === null || typeof v !== 'object' ? null : (v[k] ?? null);
            if (NESTED.test(c.type)) return { json: v };
            return v === null ? null : typeof v === 'number' ? render(v, c.type) : String(v);
        };
        const rows = r.getRows().map(row => cols.map(c => value(row, c)));
        return { json, names: cols.map(c => c.name), types: cols.map(c => c.type), rows };
    } catch (e) {
        if (Date.now() - t0 >= DUCKDB_TIMEOUT * 1000 - 50 || /INTERRUPT/i.test(e.message)) return { timeout: true };
        return { error: e.message.split('\n')[0].replaceAll(CORPORA + '/', '') };
    } finally {
        clearTimeout(timer);
    }
}

// castBack: DuckDB's rendering of TEXT cast to TYPE, or null when DuckDB's
// plain cast does not take that spelling.
async function castBack(con, text, type) {
    try {
        const r = await con.runAndReadAll(`SELECT TRY_CAST(${sqlString(text)} AS ${type})`);
        return render(r.getRows()[0][0], type);
    } catch (e) {
        return null;
    }
}

// ---- tally ----
function tallyRead(tally, rel) {
    const p = spawnSync(tally, [rel], { cwd: CORPORA, timeout: TALLY_TIMEOUT * 1000, maxBuffer: 1 << 28 });
    const err = p.stderr ? p.stderr.toString('utf8') : '';
    if (p.error && p.error.code === 'ETIMEDOUT') return { crash: `timed out after ${TALLY_TIMEOUT} s` };
    if (p.signal) return { crash: `killed by ${p.signal}` };
    // the refusal is the first line that is no note (a note, such as a
    // renamed column or a first line read as data, may come before it)
    const msg = err.split('\n').find((l) => !l.startsWith('tally: note: ')) || err.split('\n')[0];
    if (p.status === 1 && msg.startsWith('tally: ')) return { error: msg };
    if (p.status !== 0) return { crash: `exit ${p.status}: ${err.split('\n')[0]}` };
    try {
        const all = parseCsv(p.stdout.toString('utf8'));
        return { names: all[0] || [], rows: all.slice(1) };
    } catch (e) {
        return { crash: `unreadable CSV output: ${e.message}` };
    }
}

// ---- comparing ----
const NUM = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INT = /^[+-]?\d+$/;

function sameNumber(a, b) {
    if (INT.test(a) && INT.test(b)) return BigInt(a) === BigInt(b);
    return Number(a) === Number(b);
}

// canonical: whether TEXT is a number spelled as tally writes one.
const canonical = (t) => /^-?(0|[1-9]\d*)$/.test(t) || (Number.isFinite(Number(t)) && /[.e]/.test(t) && t === reprFloat(Number(t)));

function sameJson(a, b) {
    if (a === null || a === undefined) return b === null || b === undefined;
    if (b === null || b === undefined) return false;
    // DuckDB's JSON values inside a list or struct arrive as JSON text
    if (typeof a === 'object' && typeof b === 'string' && /^\s*[[{]/.test(b)) {
        try { b = JSON.parse(b); } catch (e) { return false; }
    }
    if (typeof b === 'object' && typeof a === 'string' && /^\s*[[{]/.test(a)) {
        try { a = JSON.parse(a); } catch (e) { return false; }
    }
    if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
    if (typeof a !== 'object' || typeof b !== 'object') return String(a) === String(b);
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!sameJson(a[k], b[k])) return false;
    return true;
}

// sameMoment: whether two spellings of a date, time or timestamp hold the
// same numbers (years compared by their last two digits, zero fields left
// out): 1/1/19 and 2019-01-01, 02-02-02 14:15:00 and 2002-02-02 14:15:00.
function sameMoment(a, b) {
    const nums = (t) => (t.match(/\d+/g) || []).map(n => Number(n) % 100).filter(n => n !== 0).sort((p, q) => p - q).join(',');
    return nums(a) === nums(b);
}

// cell: 'same', 'kept' or null (different) for tally's text T against
// DuckDB's rendered value D of column type TYPE.  JSON tells that DuckDB's
// read_json gave it (a VARCHAR column there holds mixed values as JSON text).
async function cell(con, t, d, type, src, json) {
    if (d !== null && typeof d === 'object') {
        if (t === null) return d.json === null ? 'same' : null;
        let j;
        try { j = JSON.parse(t); } catch (e) { j = t; }
        return sameJson(j, d.json) ? 'same' : null;
    }
    if (t === d) return 'same';
    // a quoted empty field: tally keeps the empty string, DuckDB reads null
    // (a documented difference)
    if (t === '' && d === null) return src === null || src.includes('""') ? 'kept' : null;
    if (t === null || d === null) return null;
    if (NUM.test(t) && NUM.test(d) && sameNumber(t, d)) return canonical(t) ? 'same' : 'kept';
    if (json && type === 'VARCHAR') {
        try { if (sameJson(JSON.parse(d), t)) return 'same'; } catch (e) { /* not JSON text */ }
    }
    if (/^(VARCHAR|JSON)$/.test(type)) return null;
    // DuckDB converted the text: tally's must be the source's own spelling
    // of the same value
    if (src !== null && !src.includes(t)) return null;
    if (/DATE|TIME/.test(type) && sameMoment(t, d)) return 'kept';
    const back = await castBack(con, t, type);
    return back === null || back === d ? 'kept' : null;
}

const show = (v) => v === null ? 'null' : typeof v === 'object' ? JSON.stringify(v.json) : JSON.stringify(v);
const clip = (s, n = 160) => s.length > n ? s.slice(0, n) + '...' : s;

async function classify(con, tally, rel) {
    const path = join(CORPORA, rel);
    const db = await duckRead(con, path);
    const tl = tallyRead(tally, rel);
    const tdesc = tl.crash ? `tally ${tl.crash}` : tl.error ? tl.error : `tally reads ${tl.rows.length} rows`;
    if (db.timeout) return ['duckdb-timeout', tdesc];
    if (db.error) return ['duckdb-refuses', `${clip(db.error)} | ${tdesc}`];
    if (tl.crash) return ['crash', tl.crash];
    if (tl.error) return ['refuses', tl.error];
    const nt = tl.names.length, nd = db.names.length;
    // an empty file: DuckDB names one column, tally none; no value differs
    if (nt === 0 && tl.rows.length === 0 && db.rows.length === 0) return ['same', 'empty'];
    if (nt !== nd)
        return ['columns', `tally ${nt} columns, DuckDB ${nd}` +
            (db.types.some(t => /^MAP\(/.test(t)) ? ' (DuckDB reads a MAP, tally a column per key)' : '')];
    const src = sourceText(path);
    let kept = 0;
    const n = Math.min(tl.rows.length, db.rows.length);
    const headerless = db.names.every((c, x) => /^column\d+$/.test(c) && Number(c.slice(6)) === x);
    for (let r = 0; r < n; r++) {
        for (let x = 0; x < nd; x++) {
            const t = x < tl.rows[r].length ? tl.rows[r][x] : null;
            const c = await cell(con, t, db.rows[r][x], db.types[x], src, db.json);
            if (c === 'kept') kept++;
            else if (c === null) {
                const hint = headerless && tl.rows.length === db.rows.length - 1 ? ' (DuckDB finds no header: its row 1 is tally\'s header)' : '';
                return ['different', `row ${r + 1} column ${x + 1}: tally ${clip(show(t), 80)}, DuckDB ${clip(show(db.rows[r][x]), 80)}${hint}`];
            }
        }
    }
    if (tl.rows.length !== db.rows.length)
        return ['different', `tally ${tl.rows.length} rows, DuckDB ${db.rows.length}` +
            (headerless && tl.rows.length === db.rows.length - 1 ? ' (DuckDB finds no header: its row 1 is tally\'s header)' : '')];
    return kept ? ['kept', `${kept} cells kept as source text`] : ['same', ''];
}

// reason: a refusal message with the file, positions and quoted data taken
// out, so refusals of one kind group together.
function reason(msg) {
    return msg.replace(/^tally: /, '')
        .replace(/[^\s:]*\/[^\s:]*/g, 'FILE')
        .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
        .replace(/'(?:[^'\\]|\\.)*'/g, "'…'")
        .replace(/expected 1 field,/g, 'expected ONE field,')
        .replace(/\d+/g, 'N')
        .replace('ONE', '1');
}

function readExpected() {
    const m = new Map();
    for (const line of readFileSync(EXPECTED, 'utf8').split('\n')) {
        if (!line || line.startsWith('#')) continue;
        const [path, cls] = line.split('\t');
        m.set(path, cls);
    }
    return m;
}

function tsv(results) {
    return '# path\tclass\tdetail (tests/corpora/duckdb_corpora.mjs; only the class is checked)\n' +
        results.map(([p, c, d]) => `${p}\t${c}\t${d.replace(/[\t\n\r]/g, ' ')}\n`).join('');
}

async function main() {
    const args = process.argv.slice(2);
    const mode = args[0], tallyArg = args[1];
    const ti = args.indexOf('--tsv');
    const out = ti > 0 ? args[ti + 1] : null;
    if (!['run', 'check', 'regen'].includes(mode) || !tallyArg || (ti > 0 && !out)) {
        console.error('usage: duckdb_corpora.mjs run|check|regen TALLY [--tsv OUT]');
        process.exit(2);
    }
    const skip = (why) => {
        console.log(`corpora-duckdb: ${why}`);
        if (inCi()) { console.log(`corpora-duckdb: failed (CI=${process.env.CI}: corpora and oracle are required)`); process.exit(1); }
        console.log('corpora-duckdb: skipped');
        process.exit(0);
    };
    const files = existsSync(CORPORA) ? listFiles() : [];
    if (!files.length) skip(`no file found under ${CORPORA} (set CORPORA=DIR)`);
    let con;
    try { con = await connectDuckDB(); } catch (e) { skip(e.message); }
    const tally = resolve(tallyArg);

    const results = [];
    for (const rel of files) {
        const [cls, detail] = await classify(con, tally, rel);
        results.push([rel, cls, detail]);
    }
    const count = Object.fromEntries(CLASSES.map(c => [c, 0]));
    for (const [, c] of results) count[c]++;
    console.log(`corpora-duckdb: ${files.length} files under ${CORPORA} (${SETS.join(', ')})`);
    for (const c of CLASSES) console.log(`  ${c.padEnd(15)} ${count[c]}`);
    const reasons = new Map();
    for (const [p, c, d] of results) {
        if (c !== 'refuses') continue;
        const k = `[${JSON_RE.test(p) ? 'json' : 'csv'}] ${reason(d)}`;
        reasons.set(k, (reasons.get(k) || 0) + 1);
    }
    if (reasons.size) {
        console.log('tally refuses (DuckDB reads), by reader DuckDB used and message:');
        [...reasons].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 15)
            .forEach(([m, n]) => console.log(`  ${String(n).padStart(4)}  ${clip(m, 150)}`));
    }
    if (out) writeFileSync(out, tsv(results));
    if (mode === 'regen') {
        if (count['duckdb-timeout']) {
            console.log(`corpora-duckdb: ${count['duckdb-timeout']} files timed out in DuckDB: not writing ${EXPECTED} (raise DUCKDB_TIMEOUT)`);
            process.exit(1);
        }
        writeFileSync(EXPECTED, tsv(results));
        console.log(`corpora-duckdb: wrote ${EXPECTED}`);
        return;
    }
    if (mode === 'run') return;

    const want = readExpected();
    let worse = 0, better = 0, other = 0;
    for (const [p, c, d] of results) {
        const w = want.get(p);
        want.delete(p);
        if (w === undefined) { console.log(`new ${p}: ${c} (not in duckdb_expected.tsv: run regen)`); other++; continue; }
        if (c === w) continue;
        if (c === 'duckdb-timeout') { console.log(`skip ${p}: DuckDB timed out (committed: ${w})`); continue; }
        if (!(c in RANK) || !(w in RANK)) {
            console.log(`not ok ${p}: ${w} -> ${c}: DuckDB's answer changed (${d})`); worse++;
        } else if (RANK[c] > RANK[w]) {
            console.log(`not ok ${p}: ${w} -> ${c}: ${d}`); worse++;
        } else if (RANK[c] < RANK[w]) {
            console.log(`better ${p}: ${w} -> ${c}`); better++;
        } else {
            console.log(`changed ${p}: ${w} -> ${c}: ${d}`); other++;
        }
    }
    for (const p of want.keys()) {
        console.log(`${inCi() ? 'not ok' : 'missing'} ${p}: in duckdb_expected.tsv, not under ${CORPORA}`);
        if (inCi()) worse++; else other++;
    }
    console.log(`corpora-duckdb: ${worse} worse, ${better} better, ${other} other changes than tests/corpora/duckdb_expected.tsv` +
        (better || other ? ' (run: node tests/corpora/duckdb_corpora.mjs regen TALLY, and review the diff)' : ''));
    process.exit(worse ? 1 : 0);
}

await main();
