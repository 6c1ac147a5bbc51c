// Read-back of the Parquet files tally writes, by DuckDB and Polars, value
// by value.
//
//   node tests/diff/parquet_readback.mjs TALLY WORKDIR
//
// PARQUET_READBACK_ROWS (default 1000000) sizes the large input (the bats
// test makes it 100000 under ASan, whose tally is several times slower).
//
// In WORKDIR it makes inputs (every type, nulls, empty strings, NaN and
// infinities and -0.0, an all-null column, no rows, 1e6 rows in several row
// groups, a dictionary that pays and one past 1 MiB, strings longer than
// the statistics keep), has TALLY write each as Parquet (every codec, some
// with levels, small and default row groups), and checks for each file:
//
//   - DuckDB's column types are tally's mapping (man/tally.1, "Parquet
//     output"): int64 BIGINT, float64 DOUBLE, bool BOOLEAN, string VARCHAR,
//     date DATE, timestamp TIMESTAMP, null INTEGER (all NULL);
//   - every value DuckDB reads equals the value tally reads from the
//     source (tally's CSV of it: doubles compared by their shortest text,
//     so -0.0, NaN and the infinities count; null apart from ""); the
//     other codecs' copies of the 1e6 rows are compared with the checked
//     copy by DuckDB itself (EXCEPT ALL both ways), which is much faster;
//   - tally reading its own file gives that same CSV;
//   - the footer as DuckDB sees it: row groups, codec, which chunks are
//     dictionary-coded, and min/max statistics equal to the column's;
//   - Polars (nodejs-polars) reads the same types (Int64, Float64, Bool,
//     String, Date, Datetime(us), Int32 for null) and values (its datetime
//     text without trailing zeros of the fraction, as tally spells it),
//     and the other codecs' copies equal to the checked one (frameEqual).
//
// Prints "parquet_readback: N files, M values, all equal (Polars: K
// values)" and exits 0, or
// lists the differences and exits 1.  A missing DuckDB is an error (the
// bats test that runs this skips before, outside CI); a missing Polars is
// one under CI=true, else a note (scripts/setup-oracles installs both).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectDuckDB, loadPolars, parseCsv, render } from './oracle.mjs';

const [tally, dir] = process.argv.slice(2);
if (!tally || !dir) {
    console.error('usage: parquet_readback.mjs TALLY WORKDIR');
    process.exit(2);
}
const at = (f) => join(dir, f);
const N = Number(process.env.PARQUET_READBACK_ROWS || 1000000);
const groups = (rows, size = 122880) => Math.ceil(rows / size);
const run = (args) => execFileSync(tally, args, { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30 });

// ---- inputs
writeFileSync(at('types.csv'), [
    'i,f,b,s,d,t,n',
    '1,1.5,true,abc,2024-01-31,2024-01-31 12:00:00.5,',
    ',-0.0,false,"",2020-02-29,,',
    '3,,,,,1970-01-01 00:00:00,',
    '-9223372036854775808,nan,true,"hello, ""world""",1900-01-01,2262-01-01 00:00:00.000001,',
    '9223372036854775807,inf,false,é ü 日本,9999-12-31,1900-01-01 00:00:00,',
    '0,-inf,true,' + 'x'.repeat(300) + ',0001-01-01,2024-02-29 23:59:59.999999,',
    '42,1e-300,false,' + 'a'.repeat(299) + 'b,1970-01-01,1969-12-31 23:59:59.5,',
    '',
].join('\n'));
{
    const rows = ['id,k,name,v,day,ok'];
    for (let i = 0; i < N; i++) {
        const day = `2024-${String(i % 12 + 1).padStart(2, '0')}-${String(i % 28 + 1).padStart(2, '0')}`;
        rows.push(`${i * 7 - 3000000},k${i % 100},${i % 17 ? 'n' + (i * 7919) % 1000003 : ''},` +
                  `${i % 13 ? (i / 16).toString() : ''},${day},${i % 3 === 0}`);
    }
    writeFileSync(at('big.csv'), rows.join('\n') + '\n');
}
{
    const rows = ['u,few'];
    for (let i = 0; i < 100000; i++) rows.push(`u${String(i).padStart(23, '0')},v${i % 5}`);
    writeFileSync(at('dict.csv'), rows.join('\n') + '\n');
}

// ---- what tally writes: [parquet, source, reading flags, writing flags,
// expectations]
const S = ['--schema', 'd:date,t:timestamp'];
const cases = [
    ['types.parquet', 'types.csv', S, [], { rgs: 1, codec: 'ZSTD' }],
    ['types_rg2.parquet', 'types.csv', S, ['--row-group-size', '2'], { rgs: 4 }],
    ['empty.parquet', 'types.csv', [...S, '--head', '0'], [], { rgs: 0 }],
    ['nulls.parquet', 'types.csv', ['--select', 'n, s', '--filter', 's is null'], [], { rgs: 1 }],
    ['big.parquet', 'big.csv', [], [], { rgs: groups(N), dict: { k: true, id: false, ok: false } }],
    ['big_snappy.parquet', 'big.csv', [], ['--parquet-compression', 'snappy', '--row-group-size', '30000'], { rgs: groups(N, 30000), codec: 'SNAPPY', same: 'big.parquet' }],
    ['big_gzip.parquet', 'big.csv', [], ['--parquet-compression', 'gzip', '--compress-level', '1'], { rgs: groups(N), codec: 'GZIP', same: 'big.parquet' }],
    ['big_lz4.parquet', 'big.csv', [], ['--parquet-compression', 'lz4'], { rgs: groups(N), codec: 'LZ4_RAW', same: 'big.parquet' }],
    ['big_none.parquet', 'big.csv', [], ['--parquet-compression', 'none', '--row-group-size', String(N)], { rgs: 1, codec: 'UNCOMPRESSED', same: 'big.parquet' }],
    ['big_zstd19.parquet', 'big.csv', ['--head', '20000'], ['--compress-level', '19'], { rgs: 1, codec: 'ZSTD' }],
    ['dict.parquet', 'dict.csv', [], [], { rgs: 1, dict: { u: false, few: true } }],
];

const sqlType = { int64: 'BIGINT', float64: 'DOUBLE', bool: 'BOOLEAN', string: 'VARCHAR',
                  date: 'DATE', timestamp: 'TIMESTAMP', null: 'INTEGER' };
const q = (name) => '"' + name.replace(/"/g, '""') + '"';
const con = await connectDuckDB();
await con.run("SET TimeZone = 'UTC'");
const pl = loadPolars();
if (!pl) {
    if (process.env.CI === 'true') {
        console.error('parquet_readback: Polars (nodejs-polars) is not installed: run scripts/setup-oracles');
        process.exit(1);
    }
    console.log('parquet_readback: Polars is not installed (scripts/setup-oracles): DuckDB only');
}
const plType = { int64: 'Int64', float64: 'Float64', bool: 'Bool', string: 'String',
                 date: 'Date', timestamp: 'Datetime(us,)', null: 'Int32' };
// A Polars value in tally's spelling.
function plText(v, dtype) {
    if (v === null || v === undefined) return null;
    if (dtype === 'Float64') return render(v, 'DOUBLE');
    if (dtype.startsWith('Datetime')) return v.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
    return v;
}
const bad = [];
let values = 0, plValues = 0;
for (const [file, src, flags, wflags, want] of cases) {
    run([src, ...flags, ...wflags, '-o', file]);
    const expectCsv = run([src, ...flags]);
    const back = run([file]);
    if (back !== expectCsv) bad.push(`${file}: tally reads back other rows than it wrote`);
    // a copy compared by DuckDB (want.same) needs only the row count
    const expect = want.same ? [expectCsv.slice(0, expectCsv.indexOf('\n') + 1)]
        .concat(Array(expectCsv.split('\n').length - 2).fill(null)) : parseCsv(expectCsv);
    const header = want.same ? parseCsv(expect[0])[0] : expect[0];
    expect.shift();
    const types = parseCsv(run(['schema', file])).slice(1); // as written (bats checks these)
    const path = at(file).replace(/'/g, "''");
    const desc = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).getRows();
    if (desc.length !== header.length) { bad.push(`${file}: DuckDB sees ${desc.length} columns`); continue; }
    desc.forEach(([name, type], c) => {
        if (name !== header[c] || type !== sqlType[types[c][1]])
            bad.push(`${file}: column ${c}: DuckDB ${name} ${type}, tally ${header[c]} ${types[c][1]}`);
    });
    if (want.same) {
        // the same rows as a file checked value by value: compared by DuckDB
        const other = at(want.same).replace(/'/g, "''");
        const diff = (await con.runAndReadAll(
            `SELECT (SELECT count(*) FROM (FROM read_parquet('${path}') EXCEPT ALL FROM read_parquet('${other}'))) +
                    (SELECT count(*) FROM (FROM read_parquet('${other}') EXCEPT ALL FROM read_parquet('${path}'))) +
                    abs((SELECT count(*) FROM read_parquet('${path}')) - ${expect.length})`)).getRows()[0][0];
        if (Number(diff) !== 0) bad.push(`${file}: ${diff} rows differ from ${want.same}`);
        values += expect.length * header.length;
    }
    const sel = desc.map(([name, type]) => type === 'DOUBLE' ? q(name) : `CAST(${q(name)} AS VARCHAR)`);
    const rows = want.same ? expect.map(() => null) :
        (await con.runAndReadAll(`SELECT ${sel.join(', ')} FROM read_parquet('${path}')`)).getRows();
    if (rows.length !== expect.length) bad.push(`${file}: DuckDB reads ${rows.length} rows, tally wrote ${expect.length}`);
    for (let r = 0; !want.same && r < Math.min(rows.length, expect.length) && bad.length < 20; r++)
        for (let c = 0; c < header.length; c++) {
            const got = render(rows[r][c], desc[c][1]);
            values++;
            if (got !== expect[r][c])
                bad.push(`${file}: row ${r + 1} column ${header[c]}: DuckDB ${JSON.stringify(got)}, tally ${JSON.stringify(expect[r][c])}`);
        }
    if (pl) {
        const df = pl.readParquet(at(file));
        const dts = df.dtypes.map((t) => String(t).replace(/^DataType\((.*)\)$/, '$1'));
        dts.forEach((t, c) => {
            if (t !== plType[types[c][1]]) bad.push(`${file}: column ${header[c]}: Polars ${t}, tally ${types[c][1]}`);
        });
        if (df.height !== expect.length) bad.push(`${file}: Polars reads ${df.height} rows`);
        if (want.same) {
            if (!df.frameEqual(pl.readParquet(at(want.same)), true)) bad.push(`${file}: Polars reads other rows than ${want.same}`);
            plValues += df.height * df.width;
        } else {
            df.columns.forEach((name, c) => {
                const s = df.getColumn(name);
                const vals = dts[c] === 'Float64' ? s.toArray() : s.cast(pl.Utf8).toArray();
                for (let r = 0; r < Math.min(vals.length, expect.length) && bad.length < 20; r++) {
                    const got = plText(vals[r], dts[c]);
                    plValues++;
                    if (got !== expect[r][c])
                        bad.push(`${file}: row ${r + 1} column ${name}: Polars ${JSON.stringify(got)}, tally ${JSON.stringify(expect[r][c])}`);
                }
            });
        }
    }
    // the footer
    const meta = (await con.runAndReadAll(
        `SELECT row_group_id, path_in_schema, compression, encodings, stats_min_value, stats_max_value, stats_null_count
         FROM parquet_metadata('${path}') ORDER BY row_group_id, column_id`)).getRowObjects();
    const rgs = new Set(meta.map((m) => m.row_group_id)).size;
    if (rgs !== want.rgs) bad.push(`${file}: ${rgs} row groups, wanted ${want.rgs}`);
    for (const m of meta) {
        if (want.codec && m.compression !== want.codec)
            bad.push(`${file}: ${m.path_in_schema}: codec ${m.compression}, wanted ${want.codec}`);
        const dict = /RLE_DICTIONARY/.test(m.encodings);
        if (want.dict && m.path_in_schema in want.dict && want.dict[m.path_in_schema] !== dict)
            bad.push(`${file}: ${m.path_in_schema}: encodings ${m.encodings}`);
    }
    // statistics against the column's own min and max (row group 0 of files of one group)
    if (rgs === 1 && !want.same) {
        for (const m of meta) {
            const c = header.indexOf(m.path_in_schema);
            const type = types[c][1];
            const vals = expect.map((row) => row[c]).filter((v) => v !== null && v !== 'nan');
            const nulls = expect.filter((row) => row[c] === null).length;
            if (Number(m.stats_null_count) !== nulls)
                bad.push(`${file}: ${m.path_in_schema}: null_count ${m.stats_null_count}, wanted ${nulls}`);
            if (type !== 'string' || vals.length === 0) continue;
            const bytes = vals.map((v) => Buffer.from(v));
            bytes.sort(Buffer.compare);
            const lo = bytes[0].toString(), hi = bytes[bytes.length - 1].toString();
            const long = lo.length > 256 || hi.length > 256;
            const wantLo = long ? null : lo, wantHi = long ? null : hi;
            if (m.stats_min_value !== wantLo || m.stats_max_value !== wantHi)
                bad.push(`${file}: ${m.path_in_schema}: min/max ${m.stats_min_value}/${m.stats_max_value}, wanted ${wantLo}/${wantHi}`);
        }
    }
}
if (bad.length) {
    for (const b of bad) console.log(b);
    process.exit(1);
}
console.log(`parquet_readback: ${cases.length} files, ${values} values, all equal` +
            (pl ? ` (Polars: ${plValues} values)` : ''));
