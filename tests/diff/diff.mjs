// Differential tests: tally against DuckDB on generated tables and
// expressions.
//
//   node tests/diff/diff.mjs check TALLY    compare tally with the committed
//                                           answers (tests/diff/expected.json)
//   node tests/diff/diff.mjs live TALLY     the same, and first ask DuckDB again:
//                                           its answers must still be the
//                                           committed ones
//   node tests/diff/diff.mjs regen          write expected.json anew from DuckDB
//                                           (DIFF_ONLY=dates: only the date set)
//
// The cases come from a seeded generator (the same seeds give the same cases
// on every machine): a table of a few dozen rows with int, float, string and
// bool columns and nulls, and for each seed cases of its own: a --select of
// random typed expressions, a --filter by a random condition, a --group-by
// with aggregates (and one with mode, arg_max/min_by, quantile_disc,
// count_if and filter clauses), a sort, a distinct, a join, --offset/--head
// over a sort and --tail over a filter (LIMIT/OFFSET), --describe's row of each
// column against DuckDB's count, count(DISTINCT), min, max, avg,
// stddev_samp and quantile_cont, and column selectors against DuckDB's
// star expressions and COLUMNS('re').  Both engines get the same typed data (tally
// through --schema, DuckDB through a typed CREATE TABLE), so the test is
// about the expressions, not about type inference.  An expression prints in
// two dialects (tally's and DuckDB's SQL: casts to DOUBLE/BIGINT/VARCHAR,
// typed literals) from one tree.
//
// expected.json holds every case (data, tally arguments, SQL) with DuckDB's
// answer rendered in tally's output spelling (null as null, floats as
// Python's repr, booleans as true/false), so `check` needs no DuckDB.  A
// case where DuckDB fails must make tally fail with exit 1.  Aggregates are
// compared as multisets of rows, floats within a relative 1e-9 (DuckDB adds
// in its own order; tally's float sums are exact); scalar expressions
// exactly, byte for byte.
//
// A set of fixed cases (seed "fn") calls each string and regular
// expression function once over a table of its own (makeFnCases).
//
// tests/diff/known.txt lists cases that differ on purpose (a documented
// difference from DuckDB, named there): such a case must still differ, so the
// list cannot go stale.  Prints "diff: N passed, N failed".
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectDuckDB, render, parseCsv } from './oracle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const EXPECTED = join(here, 'expected.json');
const KNOWN = join(here, 'known.txt');
const SEEDS = Number(process.env.DIFF_SEEDS || 100);

// ---- a seeded generator (mulberry32: small, and the same in every node) ----
function rng(seed) {
    let a = seed >>> 0;
    const next = () => {
        a = (a + 0x6D2B79F5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
    const pick = (xs) => xs[int(0, xs.length - 1)];
    return { next, int, pick, chance: (p) => next() < p };
}

const STRINGS = ['apple', 'Banana', '', 'straße', 'ÉCOLE', 'a b', ' pad ', 'x%y',
                 'abc_def', 'Ωmega', 'id042', '10', 'ǅemal', 'ﬁne', 'İstanbul'];

// ---- the table ----
const COLS = [
    { name: 'rn', type: 'int' },
    { name: 'k', type: 'int' },     // a group key with few values
    { name: 'i', type: 'int' },
    { name: 'j', type: 'int' },
    { name: 'f', type: 'float' },
    { name: 'g', type: 'float' },
    { name: 's', type: 'string' },
    { name: 't', type: 'string' },
    { name: 'b', type: 'bool' },
];

function makeTable(r) {
    const n = r.int(20, 45);
    const rows = [];
    for (let x = 0; x < n; x++) {
        const nul = () => r.chance(0.12);
        rows.push({
            rn: x + 1,
            k: nul() ? null : r.int(0, 4),
            i: nul() ? null : r.int(-20, 20),
            j: nul() ? null : r.int(-4, 4),
            f: nul() ? null : r.pick([r.int(-80, 80) / 4, r.int(-9999, 9999) / 100, 0, -0, 0.5, 2.5, -2.5, 1e-7, 123456.789]),
            g: nul() ? null : r.int(-3000, 3000) / 8,
            s: nul() ? null : r.pick(STRINGS),
            t: nul() ? null : r.pick(STRINGS),
            b: nul() ? null : r.chance(0.5),
        });
    }
    return rows;
}

function csvField(v) {
    if (v === null) return '';
    if (typeof v === 'string') {
        if (v === '' || /[",\n\r]/.test(v) || v !== v.trim()) return '"' + v.replaceAll('"', '""') + '"';
        return v;
    }
    if (typeof v === 'number' && Object.is(v, -0)) return '-0.0';
    return String(v);
}

function tableCsv(cols, rows) {
    return cols.map(c => c.name).join(',') + '\n' +
        rows.map(row => cols.map(c => csvField(row[c.name])).join(',') + '\n').join('');
}

const SQL_TYPE = { int: 'BIGINT', float: 'DOUBLE', string: 'VARCHAR', bool: 'BOOLEAN' };

function sqlLiteral(v, type) {
    if (v === null) return `NULL::${SQL_TYPE[type]}`;
    if (type === 'string') return `'${v.replaceAll("'", "''")}'`;
    if (type === 'float') return Object.is(v, -0) ? `'-0.0'::DOUBLE` : `'${v}'::DOUBLE`;
    return `${v}::${SQL_TYPE[type]}`;
}

function tableSql(name, cols, rows) {
    return `CREATE OR REPLACE TABLE ${name} (${cols.map(c => `${c.name} ${SQL_TYPE[c.type]}`).join(', ')});\n` +
        (rows.length ? `INSERT INTO ${name} VALUES ${rows.map(row => '(' + cols.map(c => sqlLiteral(row[c.name], c.type)).join(', ') + ')').join(', ')};` : '');
}

// The right side of the join cases: keys that repeat, miss and are null.
const UCOLS = [{ name: 'k', type: 'int' }, { name: 'v', type: 'string' }];
function makeRight(r) {
    const rows = [];
    for (let x = r.int(0, 8); x > 0; x--)
        rows.push({ k: r.chance(0.15) ? null : r.int(0, 6), v: r.pick(STRINGS) });
    return rows;
}

// ---- expressions: a node prints as [tally text, DuckDB text] ----
const E = (tl, db) => ({ tl, db });
const bin = (op, a, b, dbop = op) => E(`(${a.tl} ${op} ${b.tl})`, `(${a.db} ${dbop} ${b.db})`);
const call = (f, args, dbf = f) => E(`${f}(${args.map(a => a.tl).join(', ')})`, `${dbf}(${args.map(a => a.db).join(', ')})`);
const CAST_TL = { int: 'int', float: 'float', string: 'string', bool: 'bool' };
const cast = (a, type) => E(`cast(${a.tl} as ${CAST_TL[type]})`, `CAST(${a.db} AS ${SQL_TYPE[type]})`);

function intLit(r) { const v = r.int(-9, 9); return E(v < 0 ? `(${v})` : `${v}`, `(${v})::BIGINT`); }
function floatLit(r) {
    const v = r.pick(['0.5', '2.5', '-1.25', '3.0', '0.1', '100.0', '1e-3']);
    return E(v.startsWith('-') ? `(${v})` : v, `'${v}'::DOUBLE`);
}
function strLit(r) { const v = r.pick(STRINGS.concat(['a', 'A', 'ss'])); const q = `'${v.replaceAll("'", "''")}'`; return E(q, q); }
const col = (name) => E(name, name);

function genInt(r, d) {
    if (d <= 0 || r.chance(0.3)) return r.chance(0.7) ? col(r.pick(['i', 'j', 'k'])) : intLit(r);
    switch (r.int(0, 10)) {
    case 0: return bin('+', genInt(r, d - 1), genInt(r, d - 1));
    case 1: return bin('-', genInt(r, d - 1), genInt(r, d - 1));
    case 2: return bin('*', genInt(r, d - 1), genInt(r, d - 1));
    case 3: return bin('//', genInt(r, d - 1), genInt(r, d - 1));
    case 4: return bin('%', genInt(r, d - 1), genInt(r, d - 1));
    case 5: return call('abs', [genInt(r, d - 1)]);
    case 6: { const a = genInt(r, d - 1); return E(`(-${a.tl})`, `(-${a.db})`); }
    case 7: return call('length', [genStr(r, d - 1)]);
    case 8: { const c = genBool(r, d - 1), a = genInt(r, d - 1), b = genInt(r, d - 1);
              return E(`case when ${c.tl} then ${a.tl} else ${b.tl} end`, `CASE WHEN ${c.db} THEN ${a.db} ELSE ${b.db} END`); }
    case 9: return call('coalesce', [genInt(r, d - 1), genInt(r, d - 1)]);
    default: return cast(genFloat(r, d - 1), 'int');
    }
}

function genFloat(r, d) {
    if (d <= 0 || r.chance(0.3)) return r.chance(0.7) ? col(r.pick(['f', 'g'])) : floatLit(r);
    switch (r.int(0, 11)) {
    case 0: return bin('+', genFloat(r, d - 1), r.chance(0.5) ? genFloat(r, d - 1) : genInt(r, d - 1));
    case 1: return bin('-', genFloat(r, d - 1), genFloat(r, d - 1));
    case 2: return bin('*', genFloat(r, d - 1), r.chance(0.5) ? genFloat(r, d - 1) : genInt(r, d - 1));
    // division by a divisor that cannot be zero: tally's `/` is IEEE (1/0 is
    // inf), DuckDB's gives null, a documented difference
    case 3: { const a = genFloat(r, d - 1), b = genFloat(r, d - 1);
              return E(`(${a.tl} / (abs(${b.tl}) + 0.5))`, `(${a.db} / (abs(${b.db}) + '0.5'::DOUBLE))`); }
    case 4: return bin('//', genFloat(r, d - 1), r.chance(0.5) ? genFloat(r, d - 1) : genInt(r, d - 1));
    case 5: return bin('%', genFloat(r, d - 1), r.chance(0.5) ? genFloat(r, d - 1) : genInt(r, d - 1));
    case 6: return call(r.pick(['abs', 'floor', 'ceil']), [genFloat(r, d - 1)]);
    case 7: return call('sqrt', [call('abs', [genFloat(r, d - 1)])]);
    case 8: { const n = r.int(-1, 3), a = genFloat(r, d - 1);
              return E(`round(${a.tl}, ${n})`, `round(${a.db}, ${n})`); }
    case 9: return cast(genInt(r, d - 1), 'float');
    case 10: return call('coalesce', [genFloat(r, d - 1), genFloat(r, d - 1)]);
    default: { const c = genBool(r, d - 1), a = genFloat(r, d - 1), b = genFloat(r, d - 1);
               return E(`if(${c.tl}, ${a.tl}, ${b.tl})`, `if(${c.db}, ${a.db}, ${b.db})`); }
    }
}

function genStr(r, d) {
    if (d <= 0 || r.chance(0.3)) return r.chance(0.75) ? col(r.pick(['s', 't'])) : strLit(r);
    switch (r.int(0, 10)) {
    case 0: return call(r.pick(['upper', 'lower']), [genStr(r, d - 1)]);
    case 1: return bin('||', genStr(r, d - 1), genStr(r, d - 1));
    case 2: { const s = genStr(r, d - 1), a = intLit(r), n = r.int(0, 6);
              return E(`substr(${s.tl}, ${a.tl}, ${n})`, `substr(${s.db}, ${a.db}, ${n})`); }
    case 3: return call('trim', [genStr(r, d - 1)]);
    case 4: return call('replace', [genStr(r, d - 1), strLit(r), strLit(r)]);
    case 5: return call('ltrim', [genStr(r, d - 1)]);
    case 6: return call('rtrim', [genStr(r, d - 1)]);
    case 7: return cast(genInt(r, d - 1), 'string');
    case 8: return cast(genFloat(r, d - 1), 'string');
    case 9: return call('coalesce', [genStr(r, d - 1), genStr(r, d - 1)]);
    default: return cast(genBool(r, d - 1), 'string');
    }
}

function genBool(r, d) {
    if (d <= 0 || r.chance(0.2)) {
        if (r.chance(0.6)) return col('b');
        const v = r.pick(['true', 'false']);
        return E(v, v);
    }
    const cmp = r.pick(['=', '!=', '<', '<=', '>', '>=']);
    switch (r.int(0, 9)) {
    case 0: return bin(cmp, genInt(r, d - 1), genInt(r, d - 1));
    case 1: return bin(cmp, genFloat(r, d - 1), genFloat(r, d - 1));
    case 2: return bin(cmp, genStr(r, d - 1), genStr(r, d - 1));
    case 3: return bin('and', genBool(r, d - 1), genBool(r, d - 1));
    case 4: return bin('or', genBool(r, d - 1), genBool(r, d - 1));
    case 5: { const a = genBool(r, d - 1); return E(`(not ${a.tl})`, `(NOT ${a.db})`); }
    case 6: { const a = r.pick([genInt, genFloat, genStr])(r, d - 1); const n = r.chance(0.5) ? ' not' : '';
              return E(`(${a.tl} is${n} null)`, `(${a.db} IS${n.toUpperCase()} NULL)`); }
    case 7: { const a = genInt(r, d - 1), lo = genInt(r, 0), hi = genInt(r, 0);
              return E(`(${a.tl} between ${lo.tl} and ${hi.tl})`, `(${a.db} BETWEEN ${lo.db} AND ${hi.db})`); }
    case 8: { const a = genInt(r, d - 1), xs = [intLit(r), intLit(r), r.chance(0.3) ? E('null', 'NULL') : intLit(r)];
              return E(`(${a.tl} in (${xs.map(x => x.tl).join(', ')}))`, `(${a.db} IN (${xs.map(x => x.db).join(', ')}))`); }
    default: { const s = genStr(r, d - 1); const p = `'${r.pick(['a%', '%a%', '%e', 'A%', '%', '%ß%', '1%'])}'`;
               return E(`(${s.tl} like ${p})`, `(${s.db} LIKE ${p})`); }
    }
}

const GEN = { int: genInt, float: genFloat, string: genStr, bool: genBool };

const SCHEMA = COLS.map(c => `${c.name}:${c.type}`).join(',');
const USCHEMA = UCOLS.map(c => `${c.name}:${c.type}`).join(',');

function makeCases(seed) {
    const r = rng(seed * 7919 + 17);
    const rows = makeTable(r);
    const cases = [];
    const exprs = [];
    for (let x = 0; x < 8; x++) exprs.push(GEN[r.pick(['int', 'float', 'string', 'bool'])](r, r.int(1, 3)));
    cases.push({
        id: `s${seed}-select`,
        args: ['--select', exprs.map((e, x) => `${e.tl} as e${x}`).join(', ')],
        sql: `SELECT ${exprs.map((e, x) => `${e.db} AS e${x}`).join(', ')} FROM t ORDER BY rn`,
        split: exprs.map((e, x) => ({
            args: ['--select', `${e.tl} as e${x}`],
            sql: `SELECT ${e.db} AS e${x} FROM t ORDER BY rn`,
        })),
    });
    const c = genBool(r, 3);
    cases.push({
        id: `s${seed}-filter`,
        args: ['--filter', c.tl, '--select', 'rn'],
        sql: `SELECT rn FROM t WHERE ${c.db} ORDER BY rn`,
    });
    const fx = genFloat(r, 1), ix = genInt(r, 1), sx = genStr(r, 1);
    const aggs = [
        ['n', 'count()', 'count(*)'],
        ['ci', `count(${ix.tl})`, `count(${ix.db})`],
        ['si', `sum(${ix.tl})`, `sum(${ix.db})`],
        ['sf', `sum(${fx.tl})`, `sum(${fx.db})`],
        ['mf', `mean(${fx.tl})`, `avg(${fx.db})`],
        ['lo', `min(${sx.tl})`, `min(${sx.db})`],
        ['hi', `max(${fx.tl})`, `max(${fx.db})`],
        ['sd', `std(${fx.tl})`, `stddev_samp(${fx.db})`],
        ['va', `var(${ix.tl})`, `var_samp(${ix.db})`],
        ['md', `median(${fx.tl})`, `median(${fx.db})`],
    ];
    cases.push({
        id: `s${seed}-agg`,
        args: ['--group-by', 'k', '--agg', aggs.map(a => `${a[0]} = ${a[1]}`).join(', ')],
        sql: `SELECT k, ${aggs.map(a => `${a[2]} AS ${a[0]}`).join(', ')} FROM t GROUP BY k`,
        unordered: true,
    });
    // a sort by a random key list, rn last so ties have one order in both
    const keys = [];
    for (let x = r.int(1, 3); x > 0; x--) {
        const [tl, db] = r.pick([['f', 'f'], ['g', 'g'], ['s', 's'], ['i', 'i'], ['b', 'b'], ['k', 'k']]);
        const desc = r.chance(0.5), nf = r.chance(0.3);
        keys.push([`${tl}${desc ? ' desc' : ''}${nf ? ' nulls first' : ''}`,
                   `${db} ${desc ? 'DESC' : 'ASC'} NULLS ${nf ? 'FIRST' : 'LAST'}`]);
    }
    cases.push({
        id: `s${seed}-sort`,
        args: ['--sort', keys.map(k => k[0]).concat(['rn']).join(', '), '--select', 'rn'],
        sql: `SELECT rn FROM t ORDER BY ${keys.map(k => k[1]).join(', ')}, rn`,
    });
    const dcol = r.pick(['s', 'k', 'b', 'f']);
    cases.push({
        id: `s${seed}-distinct`,
        args: ['--distinct', dcol, '--select', dcol],
        sql: `SELECT DISTINCT ${dcol} FROM t`,
        unordered: true,
    });
    const how = r.pick(['inner', 'left', 'right', 'full', 'semi', 'anti']);
    const cols = how === 'semi' || how === 'anti' ? ['rn', 'k'] : ['rn', 'k', 'v'];
    const kx = how === 'right' || how === 'full' ? 'coalesce(t.k, u.k)' : 't.k';
    cases.push({
        id: `s${seed}-join`,
        join: true,
        args: ['--join', 'u.csv', '--join-schema', USCHEMA, '--on', 'k', '--how', how, '--select', cols.join(', ')],
        sql: `SELECT ${cols.map(c => c === 'k' ? `${kx} AS k` : c === 'v' ? 'u.v' : 't.rn').join(', ')} ` +
             `FROM t ${how.toUpperCase()} JOIN u ON t.k = u.k`,
        unordered: true,
    });
    const right = makeRight(r);
    // --describe, one case per column: its row against DuckDB's exact
    // aggregates (the tables are far below the exact-distinct bound)
    for (const { name: c, type } of COLS) {
        const num = type === 'int' || type === 'float';
        const str = type === 'string';
        cases.push({
            id: `s${seed}-describe-${c}`,
            args: ['--describe', '--filter', `column = '${c}'`, '--select',
                   'column, count, nulls, distinct, approx, min, max, mean, std, q25, q50, q75, min_len, max_len'],
            sql: `SELECT '${c}', count(${c}), count(*) - count(${c}), count(DISTINCT ${c}), false, ` +
                 `min(${c}), max(${c}), ` +
                 (num ? `avg(${c}), stddev_samp(${c}), ` +
                        [0.25, 0.5, 0.75].map(q => `quantile_cont(${c}::DOUBLE, ${q})`).join(', ')
                      : 'NULL::DOUBLE, NULL::DOUBLE, NULL::DOUBLE, NULL::DOUBLE, NULL::DOUBLE') +
                 (str ? `, min(length(${c})), max(length(${c}))` : ', NULL::BIGINT, NULL::BIGINT') +
                 ' FROM t',
            unordered: true,
        });
    }
    // column selectors (man/tally.1, SELECTORS) against DuckDB's star
    // expressions: * GLOB, * EXCLUDE, #N, GROUP BY ALL, DISTINCT and
    // ORDER BY COLUMNS(regex) (drawn last, so the cases above stay as they were)
    const names = COLS.map(c => c.name);
    const pat = r.pick(['[ij]', '?', '[fg]', '[!rk]', '*', '[a-g]', '[st]*', '[bk]', 'r?']);
    const sel = { id: `s${seed}-selector` };
    switch (r.int(0, 5)) {
    case 0:
        sel.args = ['--select', pat];
        sel.sql = `SELECT * GLOB '${pat}' FROM t ORDER BY rn`;
        break;
    case 1: {
        const out = names.filter(n => n !== 'rn' && r.chance(0.4));
        if (!out.length) out.push('s');
        sel.args = ['--select', `* exclude (${out.join(', ')})`];
        sel.sql = `SELECT * EXCLUDE (${out.join(', ')}) FROM t ORDER BY rn`;
        break;
    }
    case 2: {
        const a = r.int(1, names.length);
        const b = (a % names.length) + 1;
        sel.args = ['--select', `#${a}, #${b}`];
        sel.sql = `SELECT #${a}, #${b} FROM t ORDER BY rn`;
        break;
    }
    case 3: {
        const g = r.pick(['[bk]', '[kb]', '[bs]', 'k*']);
        sel.args = ['--group-by', g, '--agg', 'n = count(), m = max(rn)'];
        sel.sql = `SELECT * GLOB '${g}', count(*) AS n, max(rn) AS m FROM t GROUP BY ALL`;
        sel.unordered = true;
        break;
    }
    case 4: {
        const [g, re] = r.pick([['[fg]', '^[fg]$'], ['[ij]', '^[ij]$'], ['[s-t]', '^[s-t]$'], ['[bk]', '^[bk]$']]);
        const desc = r.chance(0.5), nf = r.chance(0.5);
        sel.args = ['--sort', `${g}${desc ? ' desc' : ''}${nf ? ' nulls first' : ''}, rn`, '--select', 'rn'];
        sel.sql = `SELECT rn FROM t ORDER BY COLUMNS('${re}') ${desc ? 'DESC' : 'ASC'} NULLS ${nf ? 'FIRST' : 'LAST'}, rn`;
        break;
    }
    default: {
        const d = r.pick(['[bk]', '[kb]', '[sb]', '[st]']);
        sel.args = ['--distinct', d, '--select', d];
        sel.sql = `SELECT DISTINCT * GLOB '${d}' FROM t`;
        sel.unordered = true;
    }
    }
    cases.push(sel);
    // the aggregates of issue 30 and the filter clause, from a generator of
    // their own (so the cases above stay the same): ties in mode and
    // arg_max/arg_min go to the first row in both engines on these small
    // tables, read in order
    const r2 = rng(seed * 104729 + 31);
    const q1 = r2.pick([0, 0.1, 0.25, 0.3, 0.5, 0.75, 1]), q2 = r2.pick([0, 0.2, 0.5, 0.6, 0.9, 1]);
    const ci = genBool(r2, 2), fc = genBool(r2, 2), mi = genInt(r2, 1);
    const aggs2 = [
        ['mi', `mode(${mi.tl})`, `mode(${mi.db})`],
        ['ms', 'mode(s)', 'mode(s)'],
        ['ax', 'arg_max(s, i)', 'arg_max(s, i)'],
        ['an', 'min_by(rn, g)', 'min_by(rn, g)'],
        ['qi', `quantile_disc(i, ${q1})`, `quantile_disc(i, ${q1})`],
        ['qg', `quantile_disc(g, ${q2})`, `quantile_disc(g, ${q2})`],
        ['ci', `count_if(${ci.tl})`, `count_if(${ci.db})`],
        ['nf', `count() filter (where ${fc.tl})`, `count(*) FILTER (WHERE ${fc.db})`],
        ['sf', `sum(i) filter (where ${fc.tl})`, `sum(i) FILTER (WHERE ${fc.db})`],
        ['ff', `first(t) filter (where ${fc.tl})`, `first(t) FILTER (WHERE ${fc.db})`],
        ['mf', `max(g) filter (where ${fc.tl})`, `max(g) FILTER (WHERE ${fc.db})`],
    ];
    cases.push({
        id: `s${seed}-agg2`,
        args: ['--group-by', 'k', '--agg', aggs2.map(a => `${a[0]} = ${a[1]}`).join(', ')],
        sql: `SELECT k, ${aggs2.map(a => `${a[2]} AS ${a[0]}`).join(', ')} FROM t GROUP BY k`,
        unordered: true,
    });
    // --offset, --head and --tail against LIMIT/OFFSET, over the sort and
    // the filter above (their own generator, so the cases before keep
    // theirs): the sort's top-(head + offset) heap, then the skip
    const r3 = rng(seed * 104729 + 3);
    const off = r3.pick([0, 1, 3, 7, 20, 40]), lim = r3.pick([null, 0, 1, 5, 12]);
    const sortKeys = keys.map(k => k[0]).concat(['rn']).join(', ');
    cases.push({
        id: `s${seed}-offset`,
        args: ['--sort', sortKeys, '--offset', String(off)]
            .concat(lim === null ? [] : ['--head', String(lim)]).concat(['--select', 'rn']),
        sql: `SELECT rn FROM t ORDER BY ${keys.map(k => k[1]).join(', ')}, rn` +
             `${lim === null ? '' : ` LIMIT ${lim}`} OFFSET ${off}`,
    });
    const tl = r3.pick([0, 1, 2, 5, 30]);
    cases.push({
        id: `s${seed}-tail`,
        args: ['--filter', c.tl, '--tail', String(tl), '--select', 'rn'],
        sql: `SELECT rn FROM (SELECT rn FROM t WHERE ${c.db} ORDER BY rn DESC LIMIT ${tl}) ORDER BY rn`,
    });
    // columns('re') against DuckDB's COLUMNS('re') (a partial match of the
    // names), from a generator of its own: every pattern matches a column
    const r4 = rng(seed * 104729 + 5);
    const cre = r4.pick(['^[ij]$', '[fg]', 'n', '^.$', 't|b', '^(s|k)$', '[^rn]', '']);
    if (r4.chance(0.5)) {
        cases.push({
            id: `s${seed}-colre`,
            args: ['--select', `columns('${cre}')`],
            sql: `SELECT COLUMNS('${cre}') FROM t ORDER BY rn`,
        });
    } else {
        const cdesc = r4.chance(0.5);
        cases.push({
            id: `s${seed}-colre`,
            args: ['--sort', `columns('${cre}')${cdesc ? ' desc' : ''}, rn`, '--select', 'rn'],
            sql: `SELECT rn FROM t ORDER BY COLUMNS('${cre}') ${cdesc ? 'DESC' : 'ASC'}, rn`,
        });
    }
    return { seed, csv: tableCsv(COLS, rows), csv2: tableCsv(UCOLS, right),
             sql: tableSql('t', COLS, rows) + '\n' + tableSql('u', UCOLS, right), cases };
}

// ---- the function set: one case per call of the string and regular
// expression functions (not drawn at random, so that adding a call adds a
// case and changes no other), over a table of its own seed ----
const FN_SEED = 'fn';
const FN_CALLS = [
    // [tally expression, DuckDB expression]
    ["regexp_matches(s, 'a')", "regexp_matches(s, 'a')"],
    ["regexp_matches(s, '^[a-z]+$')", "regexp_matches(s, '^[a-z]+$')"],
    ["regexp_matches(s, 'E', 'i')", "regexp_matches(s, 'E', 'i')"],
    ["regexp_matches(s, 'x%y', 'l')", "regexp_matches(s, 'x%y', 'l')"],
    ["regexp_matches(s, '\\pL\\d')", "regexp_matches(s, '\\pL\\d')"],
    ["regexp_matches(s, 'ss', 'i')", "regexp_matches(s, 'ss', 'i')"],
    ["regexp_matches(s, t)", "regexp_matches(s, t)"],
    ["regexp_full_match(s, '[a-z]+')", "regexp_full_match(s, '[a-z]+')"],
    ["regexp_full_match(s, 'a|apple')", "regexp_full_match(s, 'a|apple')"],
    ["s ~ '.*e.*'", "s ~ '.*e.*'"],
    ["s !~ '[0-9]+'", "s !~ '[0-9]+'"],
    ["regexp_replace(s, '[aeiou]', '*')", "regexp_replace(s, '[aeiou]', '*')"],
    ["regexp_replace(s, '[aeiou]', '*', 'g')", "regexp_replace(s, '[aeiou]', '*', 'g')"],
    ["regexp_replace(s, '(.)(.)', '\\2\\1', 'g')", "regexp_replace(s, '(.)(.)', '\\2\\1', 'g')"],
    ["regexp_replace(s, 'x*', '-', 'g')", "regexp_replace(s, 'x*', '-', 'g')"],
    ["regexp_replace(s, 'A', '<\\0>', 'gi')", "regexp_replace(s, 'A', '<\\0>', 'gi')"],
    ["regexp_extract(s, '([a-z]+)([0-9]*)', 1)", "regexp_extract(s, '([a-z]+)([0-9]*)', 1)"],
    ["regexp_extract(s, '([a-z]+)([0-9]*)', 2)", "regexp_extract(s, '([a-z]+)([0-9]*)', 2)"],
    ["regexp_extract(s, '[A-Z]+')", "regexp_extract(s, '[A-Z]+')"],
    ["regexp_split_to_array(s, '[ _%]')", "to_json(regexp_split_to_array(s, '[ _%]'))::VARCHAR"],
    ["regexp_split_to_array(s, '')", "to_json(regexp_split_to_array(s, ''))::VARCHAR"],
    ["regexp_split_to_array(s, 'a*')", "to_json(regexp_split_to_array(s, 'a*'))::VARCHAR"],
    ["s ilike '%A%'", "s ILIKE '%A%'"],
    ["s not ilike 'i%'", "s NOT ILIKE 'i%'"],
    ["s ilike t", "s ILIKE t"],
    ["left(s, i)", "left(s, i)"],
    ["right(s, j)", "right(s, j)"],
    ["left(s, -2)", "left(s, -2)"],
    ["lpad(s, 8, '*')", "lpad(s, 8, '*')"],
    ["rpad(s, 8, 'ab')", "rpad(s, 8, 'ab')"],
    ["lpad(s, 3, 'é-')", "lpad(s, 3, 'é-')"],
    ["reverse(s)", "reverse(s)"],
    ["repeat(s, j)", "repeat(s, j)"],
    ["strpos(s, 'a')", "strpos(s, 'a')"],
    ["strpos(s, t)", "strpos(s, t)"],
    ["instr(s, 'e')", "instr(s, 'e')"],
    ["format('{}-{:>6}|{:.3}', s, i, t)", "format('{}-{:>6}|{:.3}', s, i, t)"],
    ["format('{}', f)", "format('{}', f)"],
    ["format('{:e}|{:+.2f}|{:x}', g, f, i)", "format('{:e}|{:+.2f}|{:x}', g, f, i)"],
    ["printf('%s:%5d:%.2f', s, i, f)", "printf('%s:%5d:%.2f', s, i, f)"],
    ["printf('%08.3f|%-8s|%+d', g, t, j)", "printf('%08.3f|%-8s|%+d', g, t, j)"],
];

function makeFnCases() {
    const r = rng(424242);
    const rows = makeTable(r);
    const cases = FN_CALLS.map(([tl, db], x) => ({
        id: `fn-${x + 1}`,
        args: ['--select', `${tl} as e`],
        sql: `SELECT ${db} AS e FROM t ORDER BY rn`,
    }));
    cases.push({
        id: 'fn-filter',
        args: ['--filter', "regexp_matches(s, '[aeiou]{2}') or t ~ '[0-9]+'", '--select', 'rn'],
        sql: "SELECT rn FROM t WHERE regexp_matches(s, '[aeiou]{2}') OR t ~ '[0-9]+' ORDER BY rn",
    });
    return { seed: FN_SEED, csv: tableCsv(COLS, rows), csv2: tableCsv(UCOLS, []),
             sql: tableSql('t', COLS, rows) + '\n' + tableSql('u', UCOLS, []), cases };
}

// ---- dates and times: one fixed set ----
// A table of timestamps, dates, texts to parse and epoch numbers, and one
// case per expression, each function against DuckDB's, in the time zone
// UTC.  strptime with %z gives tally a timestamp where DuckDB has a
// TIMESTAMP WITH TIME ZONE: cast to TIMESTAMP on its side (man tally,
// DIFFERENCES FROM DUCKDB).
const DCOLS = [
    { name: 'rn', type: 'int' }, { name: 'ts', type: 'timestamp' },
    { name: 'ts2', type: 'timestamp' }, { name: 'd', type: 'date' },
    { name: 's', type: 'string' }, { name: 'n', type: 'int' }, { name: 'f', type: 'float' },
    { name: 'tz', type: 'timestamptz' },
];
const DSQL_TYPE = { ...SQL_TYPE, timestamp: 'TIMESTAMP', date: 'DATE', timestamptz: 'TIMESTAMPTZ' };
function makeDateSet() {
    const r = rng(20261207);
    const pad = (v, w) => String(v).padStart(w, '0');
    const rows = [];
    const fixed = ['2024-01-31 10:00:00', '2024-02-29 23:59:59.999999', '1969-12-31 23:59:59.5',
                   '1970-01-01 00:00:00', '2000-12-31 12:00:00', '2021-01-01 00:00:00', '2024-12-30 06:30:00'];
    for (let i = 0; i < 40; i++) {
        const ts = i < fixed.length ? fixed[i]
            : `${r.int(1900, 2100)}-${pad(r.int(1, 12), 2)}-${pad(r.int(1, 28), 2)} ` +
              `${pad(r.int(0, 23), 2)}:${pad(r.int(0, 59), 2)}:${pad(r.int(0, 59), 2)}` +
              (r.chance(0.5) ? `.${pad(r.int(0, 999999), 6)}` : '');
        const ts2 = `${r.int(1960, 2030)}-${pad(r.int(1, 12), 2)}-${pad(r.int(1, 28), 2)} ` +
                    `${pad(r.int(0, 23), 2)}:${pad(r.int(0, 59), 2)}:${pad(r.int(0, 59), 2)}`;
        const y = r.int(1950, 2050), m = r.int(1, 12), dd = r.pick([1, 15, 28, 29, 30, 31]);
        const mdays = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
        const d = `${y}-${pad(m, 2)}-${pad(Math.min(dd, mdays), 2)}`;
        const s = r.pick([`${pad(r.int(1, 28), 2)}/${r.pick(['Jan', 'Feb', 'mar', 'DEC'])}/${r.int(1970, 2030)}:${pad(r.int(0, 23), 2)}:${pad(r.int(0, 59), 2)}:${pad(r.int(0, 59), 2)} ${r.pick(['+0200', '-0530', '+00:00', '-01'])}`,
                          `${r.int(1970, 2030)}-${r.int(1, 12)}-${r.int(1, 31)}`, 'bad', '', ` ${r.int(1, 12)}/${r.int(1, 28)}/${r.int(0, 99)} ${r.int(1, 12)}:${pad(r.int(0, 59), 2)} ${r.pick(['AM', 'pm'])}`]);
        const off = r.pick(['Z', '+02:00', '-0530', '+01', '+00:00']);
        rows.push([i + 1, r.chance(0.1) ? null : ts, ts2, r.chance(0.1) ? null : d, s,
                   r.int(-2000000000, 2000000000) * 1000, r.chance(0.1) ? null : r.int(-3000000, 3000000000) / 8,
                   r.chance(0.1) ? null : ts2.replace(' ', 'T') + off]);
    }
    const q = (x) => `'${x.replaceAll("'", "''")}'`;
    const E2 = (tl, db = tl) => ({ tl, db });
    const exprs = [];
    for (const f of ['%Y-%m-%d %H:%M:%S', '%a %d %b %Y %-I:%M %p', '%c.%f %g %z|%Z|%%', '%y %-m %-d %-H %-M %-S %j %-j',
                     '%A %B %w %u %U %W %V %G', '%x %X %T %h'])
        exprs.push(E2(`strftime(ts, ${q(f)})`), E2(`strftime(d, ${q(f)})`));
    exprs.push(E2(`try_strptime(s, '%d/%b/%Y:%H:%M:%S %z')`, `CAST(try_strptime(s, '%d/%b/%Y:%H:%M:%S %z') AS TIMESTAMP)`),
               E2(`try_strptime(s, '%Y-%m-%d')`), E2(`try_strptime(s, '%m/%d/%y %I:%M %p')`),
               E2(`strptime(strftime(ts, '%Y-%m-%d %H:%M:%S.%f'), '%Y-%m-%d %H:%M:%S.%f')`),
               E2(`strptime(strftime(d, '%j %Y'), '%j %Y')`),
               E2(`strptime(s, '%Y-%m-%d')`));
    for (const fn of ['epoch', 'epoch_ms', 'epoch_us'])
        exprs.push(E2(`${fn}(ts)`), E2(`${fn}(d)`));
    exprs.push(E2('epoch_ms(n)'), E2('to_timestamp(f)'));
    // timestamptz: itself, moved, compared, cast, its parts in UTC
    exprs.push(E2('tz'), E2("tz + interval '1 month 2 hours'"), E2("tz - interval '1 day'"), E2('year(tz)'),
               E2('hour(tz)'), E2('epoch(tz)'), E2("strftime(tz, '%Y-%m-%d %H:%M:%S %z')"), E2('tz > ts'),
               E2('cast(tz as timestamp)'), E2('cast(tz as date)'), E2('cast(ts as timestamptz)'),
               E2("date_diff('hour', tz, ts2)"), E2('coalesce(tz, ts)'));
    for (const fn of ['year', 'month', 'day', 'dayofweek', 'isodow', 'dayofyear', 'week', 'quarter', 'yearweek', 'isoyear'])
        exprs.push(E2(`${fn}(ts)`), E2(`${fn}(d)`));
    for (const p of ['millennium', 'century', 'decade', 'year', 'quarter', 'month', 'week', 'day', 'hour', 'minute',
                     'second', 'millisecond', 'microsecond', 'yrs', 'mons'])
        exprs.push(E2(`date_diff('${p}', ts, ts2)`), E2(`date_diff('${p}', d, ts)`));
    exprs.push(E2(`datediff('day', d, ts2)`));
    for (const iv of ['1 month', '3 days', '1 year 2 months 3 days 04:05:06', '-1 month', '1.5 days', '1.5 months',
                      '2 weeks', '36 hours', '1 day ago', '90', '1 mon 1 d 1 h 1 m 1 s 1 ms 1 us', '13 months'])
        exprs.push(E2(`ts + interval ${q(iv)}`), E2(`d - interval ${q(iv)}`), E2(`interval ${q(iv)} + d`));
    exprs.push(E2('date_add(ts, interval 90 minute)'), E2("date_add(d, interval '1 quarter')"));
    const cases = exprs.map((e, x) => ({
        id: `dates-${x}`,
        args: ['--select', `${e.tl} as e`],
        sql: `SELECT ${e.db} AS e FROM t ORDER BY rn`,
    }));
    // median, quantile and mean of dates and timestamps (timestamps, as
    // DuckDB's), per group of three and over every row
    const aggs = [['a', 'median(ts)'], ['b', 'median(d)'], ['c', 'median(tz)'],
                  ['e', 'quantile(ts2, 0.3)', 'quantile_cont(ts2, 0.3)'],
                  ['f', 'quantile(d, 0.75)', 'quantile_cont(d, 0.75)'],
                  ['g', 'quantile(tz, 0.1)', 'quantile_cont(tz, 0.1)'],
                  ['h', 'mean(ts)', 'avg(ts)'], ['i', 'mean(d)', 'avg(d)'], ['j', 'mean(tz)', 'avg(tz)']];
    const tlAggs = aggs.map(([n, tl]) => `${n} = ${tl}`).join(', ');
    const dbAggs = aggs.map(([n, tl, db = tl]) => `${db} AS ${n}`).join(', ');
    cases.push({ id: 'dates-agg-0', args: ['--group-by', 'k = rn % 3', '--agg', tlAggs],
                 sql: `SELECT rn % 3 AS k, ${dbAggs} FROM t GROUP BY k`, unordered: true },
               { id: 'dates-agg-1', args: ['--agg', tlAggs], sql: `SELECT ${dbAggs} FROM t` });
    const csvOf = (v) => v === null ? '' : csvField(v);
    return {
        seed: 'dates', schema: DCOLS.map(c => `${c.name}:${c.type}`).join(','),
        csv: DCOLS.map(c => c.name).join(',') + '\n' + rows.map(row => row.map(csvOf).join(',')).join('\n') + '\n',
        csv2: '',
        sql: `SET TimeZone = 'UTC';\nCREATE OR REPLACE TABLE t (${DCOLS.map(c => `${c.name} ${DSQL_TYPE[c.type]}`).join(', ')});\n` +
             `INSERT INTO t VALUES ${rows.map(row => '(' + row.map((v, x) => v === null ? 'NULL' : DCOLS[x].type === 'int' || DCOLS[x].type === 'float' ? String(v) : `${DSQL_TYPE[DCOLS[x].type] === 'VARCHAR' ? '' : DSQL_TYPE[DCOLS[x].type] + ' '}${q(String(v))}`).join(', ') + ')').join(', ')};`,
        cases,
    };
}

const makeSet = (seed) => seed === FN_SEED ? makeFnCases() : seed === 'dates' ? makeDateSet() : makeCases(seed);

// ---- DuckDB's answers in tally's spelling ----
async function duckdb() {
    try {
        return await connectDuckDB();
    } catch (e) {
        console.error(`diff: ${e.message}`);
        process.exit(1);
    }
}

async function ask(con, sql) {
    try {
        const r = await con.runAndReadAll(sql);
        const types = r.columnTypes().map(t => t.toString());
        return { rows: r.getRows().map(row => row.map((v, x) => render(v, types[x]))) };
    } catch (e) {
        return { error: e.message.split('\n')[0] };
    }
}

async function answer(con, set) {
    await con.run(set.sql);
    const out = [];
    for (const c of set.cases) {
        const a = await ask(con, c.sql);
        if (a.error && c.split) {
            // one failing expression fails the batch: ask each alone
            c.split.forEach((p, x) => out.push({ id: `${c.id}${x}`, args: p.args, sql: p.sql }));
            for (const p of out.slice(-c.split.length)) Object.assign(p, await ask(con, p.sql));
            continue;
        }
        out.push({ id: c.id, args: c.args, sql: c.sql, unordered: c.unordered || undefined, ...a });
    }
    return { seed: set.seed, schema: set.schema, csv: set.csv, csv2: set.csv2, cases: out };
}

// ---- tally's answers ----
function runTally(tally, dir, c, schema) {
    const p = spawnSync(tally, ['--schema', schema || SCHEMA, 'data.csv', ...c.args], { encoding: 'utf8', cwd: dir });
    if (p.status !== 0) return { status: p.status, stderr: p.stderr };
    return { status: 0, rows: parseCsv(p.stdout).slice(1) };
}

function close(a, b) {
    if (a === b) return true;
    if (a === null || b === null) return false;
    const x = Number(a), y = Number(b);
    if (Number.isNaN(x) || Number.isNaN(y)) return false;
    return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

function compare(c, got) {
    if (c.error) {
        if (got.status === 1 && /^tally: /.test(got.stderr)) return null;
        return got.status === 0 ? `DuckDB fails (${c.error}), tally gives ${JSON.stringify(got.rows).slice(0, 200)}`
                                : `DuckDB fails (${c.error}), tally exits ${got.status}: ${got.stderr.trim()}`;
    }
    if (got.status !== 0) return `tally exits ${got.status}: ${got.stderr.trim()}`;
    let want = c.rows, have = got.rows;
    if (c.unordered) {
        const key = (row) => JSON.stringify(row);
        want = [...want].sort((p, q) => key(p) < key(q) ? -1 : key(p) > key(q) ? 1 : 0);
        have = [...have].sort((p, q) => key(p) < key(q) ? -1 : key(p) > key(q) ? 1 : 0);
    }
    if (want.length !== have.length) return `${have.length} rows, DuckDB ${want.length}`;
    for (let r = 0; r < want.length; r++)
        for (let x = 0; x < want[r].length; x++) {
            const ok = c.unordered ? close(want[r][x], have[r][x]) : want[r][x] === have[r][x];
            if (!ok) return `row ${r + 1} column ${x + 1}: tally ${JSON.stringify(have[r][x])}, DuckDB ${JSON.stringify(want[r][x])}`;
        }
    return null;
}

function readKnown() {
    if (!existsSync(KNOWN)) return new Map();
    const m = new Map();
    for (const line of readFileSync(KNOWN, 'utf8').split('\n')) {
        const t = line.replace(/#.*/, '').trim();
        if (!t) continue;
        const [id, ...why] = t.split(/\s+/);
        m.set(id, why.join(' '));
    }
    return m;
}

async function main() {
    const [mode, tallyArg] = process.argv.slice(2);
    if (mode === 'regen') {
        const con = await duckdb();
        // DIFF_ONLY=dates: answer the date set again, keep the others as
        // committed (DuckDB's float sums vary in their last digits)
        const sets = [];
        if (process.env.DIFF_ONLY === 'dates')
            sets.push(...JSON.parse(readFileSync(EXPECTED, 'utf8')).filter(x => x.seed !== 'dates'));
        else {
            for (let s = 1; s <= SEEDS; s++) sets.push(await answer(con, makeCases(s)));
            sets.push(await answer(con, makeFnCases()));
        }
        sets.push(await answer(con, makeDateSet()));
        writeFileSync(EXPECTED, JSON.stringify(sets, null, 0).replaceAll('{"seed"', '\n{"seed"') + '\n');
        console.log(`diff: wrote ${EXPECTED} (${sets.reduce((n, s) => n + s.cases.length, 0)} cases)`);
        return;
    }
    if ((mode !== 'check' && mode !== 'live') || !tallyArg) {
        console.error('usage: diff.mjs check|live TALLY | regen');
        process.exit(2);
    }
    const sets = JSON.parse(readFileSync(EXPECTED, 'utf8'));
    let failed = 0, passed = 0;
    if (mode === 'live') {
        // the committed answers must still be DuckDB's, and the generator
        // must still make the committed cases
        const con = await duckdb();
        // (row order of unordered cases and the last digits of DuckDB's
        // float aggregates vary from run to run: compared as for tally)
        for (const set of sets) {
            const again = await answer(con, makeSet(set.seed));
            const same = again.csv === set.csv && again.csv2 === set.csv2 &&
                again.cases.length === set.cases.length &&
                again.cases.every((c, x) => {
                    const w = set.cases[x];
                    if (c.id !== w.id || JSON.stringify(c.args) !== JSON.stringify(w.args) || c.sql !== w.sql) return false;
                    if (c.error || w.error) return c.error === w.error;
                    return compare(w, { status: 0, rows: c.rows }) === null;
                });
            if (!same) {
                console.log(`not ok oracle seed ${set.seed}: DuckDB or the generator no longer gives the committed answers (run: node tests/diff/diff.mjs regen, and review the diff)`);
                failed++;
            }
        }
    }
    const known = readKnown();
    const tally = tallyArg.startsWith('/') ? tallyArg : join(process.cwd(), tallyArg);
    const dir = mkdtempSync(join(tmpdir(), 'tally-diff-'));
    try {
        for (const set of sets) {
            writeFileSync(join(dir, 'data.csv'), set.csv);
            writeFileSync(join(dir, 'u.csv'), set.csv2);
            for (const c of set.cases) {
                const why = compare(c, runTally(tally, dir, c, set.schema));
                if (known.has(c.id)) {
                    if (why) { passed++; continue; }
                    console.log(`not ok ${c.id}: listed in known.txt (${known.get(c.id)}) but now agrees with DuckDB: remove it`);
                    failed++;
                } else if (why) {
                    console.log(`not ok ${c.id}: ${why}\n  tally ${c.args.map(a => `'${a}'`).join(' ')}\n  ${c.sql}`);
                    failed++;
                } else passed++;
            }
        }
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
    console.log(`diff: ${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
}

await main();
