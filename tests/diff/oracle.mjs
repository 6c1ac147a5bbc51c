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

// loadPolars: Polars for Node (nodejs-polars) from the same folder, or null
// when scripts/setup-oracles has not installed it there.
export function loadPolars() {
    try {
        return createRequire(join(oracleDir(), 'package.json'))('nodejs-polars');
    } catch (e) {
        return null;
    }
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

// ---- Parquet: DuckDB's reading of a file through tally's mappings ----
//
// man/tally.1 ("Parquet") maps Parquet's types onto tally's; these are the
// same mappings as DuckDB queries (scripts/gen-parquet-fixtures.mjs and
// scripts/parquet-golden.mjs use them):
//
//   DECIMAL(p, s), p <= 15  CAST(x AS DOUBLE)
//   DECIMAL(p, s), p > 15   CAST(x AS VARCHAR)        exact text
//   FLOAT                   CAST(x AS DOUBLE)         widened exactly
//   TIMESTAMP (any unit)    CAST(x AS TIMESTAMP)      microseconds
//   TIMESTAMP WITH TIME     the same and +00          the UTC clock time
//     ZONE                                            (a timestamptz)
//   BLOB                    the bytes when they are valid UTF-8, else
//                           DuckDB's BLOB text (\xHH for other bytes)
//   STRUCT                  one column per field, "parent.child", to the
//                           8th part of a name; there, to_json(x)
//   LIST, MAP               to_json(x)               JSON text
//   everything else         CAST(x AS VARCHAR)
//
// The connection must run with SET TimeZone = 'UTC'.

// parquetMapping: the select list reading `path` of SQL type `type`:
// [[name, expression, kind]] (kind f: a double, blob: bytes, s: text).
export function parquetMapping(name, type, path, parts = 1) {
    const st = type.match(/^STRUCT\((.*)\)$/s);
    if ((st && parts >= 8) || /\[\d*\]$/.test(type) || /^MAP\(/.test(type))
        return [[name, `CAST(to_json(${path}) AS VARCHAR)`, 's']];
    if (st) {
        const out = [];
        let depth = 0, cur = '';
        const fields = [];
        for (const ch of st[1]) {
            if (ch === '(') depth++;
            if (ch === ')') depth--;
            if (ch === ',' && depth === 0) { fields.push(cur.trim()); cur = ''; } else cur += ch;
        }
        if (cur.trim()) fields.push(cur.trim());
        for (const f of fields) {
            const m = f.match(/^("(?:[^"]|"")*"|\S+)\s+(.*)$/s);
            const fname = m[1].startsWith('"') ? m[1].slice(1, -1).replace(/""/g, '"') : m[1];
            out.push(...parquetMapping(`${name}.${fname}`, m[2],
                `${path}."${fname.replace(/"/g, '""')}"`, parts + 1));
        }
        return out;
    }
    const dec = type.match(/^DECIMAL\((\d+),(\d+)\)$/);
    if (dec) return Number(dec[1]) <= 15 ? [[name, `CAST(${path} AS DOUBLE)`, 'f']]
        : [[name, `CAST(${path} AS VARCHAR)`, 's']];
    if (type === 'FLOAT' || type === 'DOUBLE') return [[name, `CAST(${path} AS DOUBLE)`, 'f']];
    if (type === 'BLOB') return [[name, path, 'blob']];
    if (type === 'TIMESTAMP WITH TIME ZONE')
        return [[name, `CAST(CAST(${path} AS TIMESTAMP) AS VARCHAR) || '+00'`, 's']];
    if (type.startsWith('TIMESTAMP')) return [[name, `CAST(CAST(${path} AS TIMESTAMP) AS VARCHAR)`, 's']];
    return [[name, `CAST(${path} AS VARCHAR)`, 's']];
}

// csvField: one value in tally's CSV spelling (null empty, "" the empty
// string, quoted when it holds a comma, quote, CR or LF).
export function csvField(v) {
    if (v === null) return '';
    if (v === '') return '""';
    return /[",\r\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
}

// blobText: bytes as tally shows a byte array: the text when valid UTF-8,
// else DuckDB's BLOB spelling.
export function blobText(bytes) {
    const b = Buffer.from(bytes);
    const s = b.toString('utf8');
    if (Buffer.from(s, 'utf8').equals(b)) return s;
    let o = '';
    for (const x of b) {
        o += x >= 32 && x <= 126 && x !== 39 && x !== 34 && x !== 92
            ? String.fromCharCode(x) : '\\x' + x.toString(16).toUpperCase().padStart(2, '0');
    }
    return o;
}

// parquetAnswer: DuckDB's reading of the Parquet file at path as the CSV
// text tally writes for it (header and rows, each line ending in LF).
export async function parquetAnswer(conn, path) {
    const sql = async (q) => (await conn.runAndReadAll(q)).getRows();
    const lit = path.replace(/'/g, "''");
    const cols = (await sql(`DESCRIBE SELECT * FROM read_parquet('${lit}')`))
        .flatMap(([n, t]) => parquetMapping(n, t, `"${n.replace(/"/g, '""')}"`));
    const rows = cols.length
        ? await sql(`SELECT ${cols.map((c) => c[1]).join(', ')} FROM read_parquet('${lit}')`) : [];
    const lines = [cols.map((c) => csvField(c[0])).join(',')];
    for (const r of rows) {
        lines.push(r.map((v, i) => {
            if (v === null) return '';
            if (cols[i][2] === 'f') return csvField(reprFloat(Number(v)));
            if (cols[i][2] === 'blob') return csvField(blobText(v.bytes));
            return csvField(String(v));
        }).join(','));
    }
    return lines.join('\n') + '\n';
}
