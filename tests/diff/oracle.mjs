// The test oracle shared by the differential tests: DuckDB for Node
// (@duckdb/node-api, installed by scripts/setup-oracles outside the clone)
// and the rendering of DuckDB's values in tally's output spelling, so that
// an answer of DuckDB and one of tally compare as text.
//
// Used by tests/diff/diff.mjs (generated tables and expressions) and
// tests/corpora/duckdb_corpora.mjs (real files through DuckDB's
// auto-detecting readers).  The package is found with createRequire from
// ORACLE_DIR (default ~/.cache/tally/oracle) because it lives outside the
// clone's node_modules.
import { createRequire } from 'node:module';
import { join } from 'node:path';

// oracleDir: the folder scripts/setup-oracles installs DuckDB into.
export function oracleDir() {
    return process.env.ORACLE_DIR ||
        join(process.env.XDG_CACHE_HOME || join(process.env.HOME || '/root', '.cache'), 'tally', 'oracle');
}

// connectDuckDB: a connection to an in-memory DuckDB; throws an Error that
// says how to install the oracle when the package is missing.
export async function connectDuckDB() {
    const dir = oracleDir();
    let mod;
    try {
        mod = createRequire(join(dir, 'package.json'))('@duckdb/node-api');
    } catch (e) {
        throw new Error(`DuckDB (@duckdb/node-api) not found under ${dir}: run scripts/setup-oracles`);
    }
    const inst = await mod.DuckDBInstance.create(':memory:');
    return inst.connect();
}

// reprFloat: a double as tally writes it (Python's repr: the shortest text
// that reads back to the same double, exponent from 1e16 and below 1e-4).
export function reprFloat(x) {
    if (Number.isNaN(x)) return 'nan';
    if (x === Infinity) return 'inf';
    if (x === -Infinity) return '-inf';
    if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
    const [m, e] = x.toExponential().split('e');
    const exp = Number(e);
    const neg = m.startsWith('-');
    const digits = m.replace('-', '').replace('.', '');
    let s;
    if (exp < -4 || exp >= 16) {
        s = digits[0] + (digits.length > 1 ? '.' + digits.slice(1) : '') + 'e' + (exp < 0 ? '-' : '+') + String(Math.abs(exp)).padStart(2, '0');
    } else if (exp < 0) {
        s = '0.' + '0'.repeat(-exp - 1) + digits;
    } else if (digits.length <= exp + 1) {
        s = digits + '0'.repeat(exp + 1 - digits.length) + '.0';
    } else {
        s = digits.slice(0, exp + 1) + '.' + digits.slice(exp + 1);
    }
    return (neg ? '-' : '') + s;
}

// render: one DuckDB scalar value of the SQL type TYPE (its text form) in
// tally's spelling: null as null, booleans as true/false, doubles as repr.
export function render(v, type) {
    if (v === null || v === undefined) return null;
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'number') return /DOUBLE|FLOAT/.test(type) ? reprFloat(v) : String(v);
    return String(v);
}

// parseCsv: tally's CSV output as rows of cells (RFC 4180, with tally's
// rule that an unquoted empty field is null and a quoted one the empty
// string).  Accepts CRLF line ends.
export function parseCsv(text) {
    const rows = [];
    let row = [], x = 0;
    while (x < text.length) {
        let v, quoted = false;
        if (text[x] === '"') {
            quoted = true;
            let s = '';
            x++;
            for (;;) {
                const q = text.indexOf('"', x);
                if (q < 0) throw new Error('unterminated quote');
                s += text.slice(x, q);
                if (text[q + 1] === '"') { s += '"'; x = q + 2; } else { x = q + 1; break; }
            }
            v = s;
        } else {
            let e = x;
            while (e < text.length && text[e] !== ',' && text[e] !== '\n') e++;
            v = text.slice(x, e);
            if (v.endsWith('\r') && text[e] === '\n') v = v.slice(0, -1);
            x = e;
        }
        row.push(v === '' && !quoted ? null : v);
        if (text[x] === ',') { x++; continue; }
        if (text[x] === '\n') x++;
        rows.push(row);
        row = [];
    }
    return rows;
}
