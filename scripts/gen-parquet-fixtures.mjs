// Make the Parquet fixtures of tests/cli/parquet.bats in tests/cli/data/parquet/:
//
//   node scripts/gen-parquet-fixtures.mjs          write every file anew
//   node scripts/gen-parquet-fixtures.mjs check    fail when a file written now
//                                                  differs from the committed one
//
// Three kinds of files:
//   - DuckDB writes tables (every type tally reads, every codec, format v1
//     and v2 pages with their encodings, several row groups, structs,
//     nulls, no rows) with COPY ... TO (FORMAT parquet);
//   - this script writes, byte by byte, what DuckDB does not: INT96
//     timestamps, deprecated BIT_PACKED levels, and damaged files (a
//     dictionary index out of range, an unsupported encoding or codec,
//     encryption, a corrupt page header, levels that run out, page counts
//     that disagree with the row group, corrupt compressed data);
//   - copies of a DuckDB file cut short or with a bad magic number or
//     footer length.
//
// Every file tally should read gets NAME.csv beside it: DuckDB's own reading
// of the file (the oracle, scripts/setup-oracles), through the mappings
// man/tally.1 documents for Parquet (tests/diff/oracle.mjs, parquetAnswer,
// lists them), spelt as tally's CSV writer spells values.
//
// The bats file then wants tally's output to be exactly that CSV.  The files
// tally refuses have their messages written in the bats file.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { connectDuckDB, parquetAnswer } from '../tests/diff/oracle.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(root, 'tests/cli/data/parquet');
const checkOnly = process.argv[2] === 'check';
const written = new Map(); // name -> bytes

mkdirSync(OUT, { recursive: true });
const db = await connectDuckDB();
const sql = async (s) => (await db.runAndReadAll(s)).getRows();
await sql("SET TimeZone = 'UTC'");

// ------------------------------------------------------------ DuckDB files

const TYPES = `
SELECT * FROM (VALUES
 (1, true, (-128)::TINYINT, (-32768)::SMALLINT, (-2147483648)::INTEGER, (-9223372036854775808)::BIGINT,
  0::UTINYINT, 0::USMALLINT, 0::UINTEGER, 0::UBIGINT, 1.5::FLOAT, 0.1::DOUBLE,
  (-12.34)::DECIMAL(4,2), 1234567.891::DECIMAL(10,3), 123456789012.3456::DECIMAL(18,4),
  (-123456789012345678901234.567891)::DECIMAL(30,6), 'plain', 'abc'::BLOB,
  DATE '1969-12-31', TIMESTAMP '1970-01-01 00:00:00', TIMESTAMP_MS '2024-02-29 23:59:59.999',
  TIMESTAMP_NS '2000-01-01 12:00:00.123456', TIMESTAMP_S '2038-01-19 03:14:08',
  TIMESTAMPTZ '2024-06-01 12:00:00+02', TIME '00:00:00', TIMETZ '10:11:12.5+00',
  '00000000-0000-0000-0000-000000000000'::UUID, 'x'),
 (2, false, 127::TINYINT, 32767::SMALLINT, 2147483647::INTEGER, 9223372036854775807::BIGINT,
  255::UTINYINT, 65535::USMALLINT, 4294967295::UINTEGER, 9223372036854775807::UBIGINT,
  (-3.4e38)::FLOAT, (-1e300)::DOUBLE, 99.99::DECIMAL(4,2), (-0.001)::DECIMAL(10,3),
  (-0.0001)::DECIMAL(18,4), 0.5::DECIMAL(30,6), 'comma, "quote"', '\\x00\\xFF\\x27A'::BLOB,
  DATE '2024-02-29', TIMESTAMP '2024-01-01 10:00:00.5', TIMESTAMP_MS '1900-01-01 00:00:00',
  TIMESTAMP_NS '1677-09-22 00:00:00', TIMESTAMP_S '1970-01-01 00:00:01',
  TIMESTAMPTZ '1999-12-31 23:59:59.999999+00', TIME '23:59:59.999999', TIMETZ '00:00:00+00',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID, 'y'),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'inf'::FLOAT, 'nan'::DOUBLE, NULL,
  NULL, NULL, NULL, '', ''::BLOB, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, true, 0, 0, 0, 0, 1, 1, 1, 1, (-0.0)::FLOAT, '-inf'::DOUBLE, 0, 0, 0, 0,
  'line
break', '\\xC3\\xA9'::BLOB, DATE '9999-12-31', TIMESTAMP '2262-04-11 23:47:16.854775',
  NULL, NULL, NULL, NULL, TIME '12:30:00.001', NULL, NULL, 'y'),
 (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
) t(id, b, i8, i16, i32, i64, u8, u16, u32, u64, f, d, dec4, dec10, dec18, dec30, s, bl, dt,
    ts, ts_ms, ts_ns, ts_s, tstz, tm, tmtz, uu, e)`;

// A table for the codecs and page formats: ints, floats, dictionary and
// plain strings, nulls every 7th row.
const MIXED = `
SELECT range AS id,
       CASE WHEN range % 7 = 3 THEN NULL ELSE range * 37 % 1000 - 500 END AS n,
       range / 8.0 AS x,
       ['north', 'south', 'east', 'west'][range % 4 + 1] AS region,
       CASE WHEN range % 5 = 0 THEN NULL ELSE 'item-' || (range * 7919 % 100003) END AS item,
       range % 3 = 0 AS flag
FROM range(2100)`;

const duck = [
    ['types', `COPY (${TYPES} ORDER BY id) TO '@OUT@' (FORMAT parquet)`],
    ['types_v2', `COPY (${TYPES} ORDER BY id) TO '@OUT@' (FORMAT parquet, PARQUET_VERSION v2)`],
    ['codec_uncompressed', `COPY (${MIXED}) TO '@OUT@' (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 1000)`],
    ['codec_snappy', `COPY (${MIXED}) TO '@OUT@' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 1000)`],
    ['codec_gzip', `COPY (${MIXED}) TO '@OUT@' (FORMAT parquet, COMPRESSION gzip, ROW_GROUP_SIZE 1000)`],
    ['codec_zstd', `COPY (${MIXED}) TO '@OUT@' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1000)`],
    ['codec_lz4_raw', `COPY (${MIXED}) TO '@OUT@' (FORMAT parquet, COMPRESSION lz4_raw, ROW_GROUP_SIZE 1000)`],
    ['codec_brotli', `COPY (${MIXED}) TO '@OUT@' (FORMAT parquet, COMPRESSION brotli, ROW_GROUP_SIZE 1000)`],
    ['pages_v2', `COPY (${MIXED}) TO '@OUT@' (FORMAT parquet, PARQUET_VERSION v2, COMPRESSION zstd, ROW_GROUP_SIZE 1000)`],
    ['nulls', `COPY (SELECT range AS id, NULL::INTEGER AS none, CASE WHEN range % 2 = 0 THEN '' END AS empty,
                     NULL::VARCHAR AS nothing FROM range(5)) TO '@OUT@' (FORMAT parquet)`],
    ['no_rows', `COPY (SELECT 1::INTEGER AS a, 'x' AS b, 2.5::DOUBLE AS c LIMIT 0) TO '@OUT@' (FORMAT parquet)`],
    ['structs', `COPY (SELECT * FROM (VALUES
        (1, {'a': 10, 'b': 'x'}, {'x': {'y': 1.5}}),
        (2, NULL, {'x': NULL}),
        (3, {'a': NULL, 'b': 'z'}, NULL)) t(id, s, deep)) TO '@OUT@' (FORMAT parquet)`],
    ['nested', `COPY (SELECT * FROM (VALUES
        (1, [1, 2, 3], ['a', NULL], {'k': [1.5, 2.5]}, MAP {'x': 1, 'y': NULL},
         [{'a': 1, 'b': 'p'}, NULL], [[1], [], NULL, [2, 3]], [DATE '2024-01-01'], [true, false],
         {'a': {'b': {'c': {'d': {'e': {'f': {'g': {'h': 1}}}}}}}}),
        (2, [], [], NULL, MAP {}, [], [], [], [], NULL),
        (3, NULL, NULL, {'k': NULL}, NULL, NULL, NULL, NULL, NULL,
         {'a': {'b': {'c': {'d': {'e': {'f': {'g': NULL}}}}}}}),
        (4, [NULL], ['q"uote, \\back'], {'k': []}, MAP {'z': 3}, [{'a': NULL, 'b': NULL}], [[NULL]],
         [NULL], [NULL], {'a': {'b': {'c': {'d': {'e': {'f': {'g': {'h': NULL}}}}}}}})
        ) t(id, ints, strs, s, m, structs, lists, dates, bools, deep)) TO '@OUT@' (FORMAT parquet)`],
    ['nested_v2', `COPY (SELECT range AS id, CASE WHEN range % 5 = 0 THEN NULL
                                   ELSE [range % 3, NULL, range % 7] END AS l,
                          MAP {'k' || (range % 4): range} AS m
                   FROM range(3000)) TO '@OUT@' (FORMAT parquet, PARQUET_VERSION v2, ROW_GROUP_SIZE 2048)`],
    ['u64_max', `COPY (SELECT 1 AS id, 18446744073709551615::UBIGINT AS big) TO '@OUT@' (FORMAT parquet)`],
    ['ts_nanos', `COPY (SELECT TIMESTAMP_NS '2024-01-01 00:00:00.123456789' AS t) TO '@OUT@' (FORMAT parquet)`],
];

for (const [name, copy] of duck) {
    const tmp = join(OUT, `.${name}.tmp.parquet`);
    await sql(copy.replace('@OUT@', tmp));
    written.set(`${name}.parquet`, readFileSync(tmp));
    (await import('node:fs')).rmSync(tmp);
}

// ------------------------------------------------------ hand-made files

// Thrift compact protocol, enough to write a footer and page headers.
class TW {
    constructor() { this.b = []; this.last = [0]; }
    byte(x) { this.b.push(x & 255); }
    bytes(a) { for (const x of a) this.byte(x); }
    uvar(v) { v = BigInt(v); while (v >= 0x80n) { this.byte(Number(v & 0x7fn) | 0x80); v >>= 7n; } this.byte(Number(v)); }
    zz(v) { v = BigInt(v); this.uvar(v >= 0n ? v << 1n : ((-v) << 1n) - 1n); }
    field(id, type) {
        const d = id - this.last[this.last.length - 1];
        if (d > 0 && d <= 15) this.byte(d << 4 | type); else { this.byte(type); this.zz(id); }
        this.last[this.last.length - 1] = id;
    }
    begin() { this.last.push(0); }
    end() { this.byte(0); this.last.pop(); }
    i32(id, v) { this.field(id, 5); this.zz(v); }
    i64(id, v) { this.field(id, 6); this.zz(v); }
    bin(id, a) { this.field(id, 8); this.uvar(a.length); this.bytes(a); }
    str(id, s) { this.bin(id, Buffer.from(s)); }
    listHead(id, elem, n) { this.field(id, 9); if (n < 15) this.byte(n << 4 | elem); else { this.byte(0xf0 | elem); this.uvar(n); } }
    struct(id, fn) { this.field(id, 12); this.begin(); fn(this); this.end(); }
    elem(fn) { this.begin(); fn(this); this.end(); }
    buf() { return Buffer.from(this.b); }
}

const PLAIN = 0, RLE_DICT = 8, RLE = 3, BIT_PACKED = 4;
const INT32 = 1, INT64 = 2, INT96 = 3, BYTE_ARRAY = 6;

function le32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); return b; }
function le64(v) { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(v)); return b; }

// RLE/bit-packed hybrid of values of width w (<= 8) as one bit-packed run.
function hybrid(values, w) {
    const n = Math.ceil(values.length / 8) * 8;
    const out = [(n / 8) << 1 | 1];
    let acc = 0, bits = 0;
    for (let i = 0; i < n; i++) {
        acc |= (values[i] ?? 0) << bits;
        bits += w;
        while (bits >= 8) { out.push(acc & 255); acc >>= 8; bits -= 8; }
    }
    if (bits) out.push(acc & 255);
    return Buffer.from(out);
}

// A page: header and bytes.  kind 'data' (v1) or 'dict'.
function page({ kind = 'data', n, enc = PLAIN, data, defEnc = RLE, raw, compressed, size }) {
    const t = new TW();
    t.begin();
    t.i32(1, kind === 'dict' ? 2 : 0);
    t.i32(2, size ?? data.length);
    t.i32(3, (compressed ?? data).length);
    if (kind === 'dict') {
        t.struct(7, (s) => { s.i32(1, n); s.i32(2, enc); });
    } else {
        t.struct(5, (s) => { s.i32(1, n); s.i32(2, enc); s.i32(3, defEnc); s.i32(4, RLE); });
    }
    t.end();
    return Buffer.concat([raw ?? t.buf(), compressed ?? data]);
}

// A whole file: columns [{name, type, optional, extra(schema element
// fields)}], one row group of rows rows whose chunk j is pages[j]
// (Buffers) in codec codecs[j]; footerExtra(t) adds FileMetaData fields.
function file({ columns, rows, chunks, codecs = [], footerExtra, tail = 'PAR1' }) {
    const parts = [Buffer.from('PAR1')];
    let off = 4;
    const metas = chunks.map((pages, j) => {
        const start = off;
        const bytes = Buffer.concat(pages);
        parts.push(bytes);
        off += bytes.length;
        return { start, size: bytes.length, dict: pages.dict };
    });
    const t = new TW();
    t.begin();
    t.i32(1, 1);
    t.listHead(2, 12, columns.length + 1);
    t.elem((s) => { s.str(4, 'schema'); s.i32(5, columns.length); });
    for (const c of columns) {
        t.elem((s) => {
            s.i32(1, c.type);
            if (c.length) s.i32(2, c.length);
            s.i32(3, c.optional ? 1 : 0);
            s.str(4, c.name);
            if (c.converted !== undefined) s.i32(6, c.converted);
        });
    }
    t.i64(3, rows);
    t.listHead(4, 12, 1);
    t.elem((g) => {
        g.listHead(1, 12, columns.length);
        columns.forEach((c, j) => g.elem((cc) => {
            cc.i64(2, metas[j].start);
            cc.struct(3, (m) => {
                m.i32(1, c.type);
                m.listHead(2, 5, 1);
                m.zz(PLAIN);
                m.listHead(3, 8, 1);
                m.uvar(c.name.length);
                m.bytes(Buffer.from(c.name));
                m.i32(4, codecs[j] ?? 0);
                m.i64(5, rows);
                m.i64(6, metas[j].size);
                m.i64(7, metas[j].size);
                m.i64(9, metas[j].dict ? metas[j].start + metas[j].dict : metas[j].start);
                if (metas[j].dict) m.i64(11, metas[j].start);
            });
            if (c.encrypted) cc.struct(8, (k) => k.struct(1, () => {}));
        }));
        g.i64(2, off);
        g.i64(3, rows);
    });
    if (footerExtra) footerExtra(t);
    t.end();
    const footer = t.buf();
    parts.push(footer, le32(footer.length), Buffer.from(tail));
    return Buffer.concat(parts);
}

// Dictionary-encoded pages: a dictionary page, then data pages.
function dictChunk(dictValues, pages) {
    const d = page({ kind: 'dict', n: dictValues.length, data: Buffer.concat(dictValues.map(le32)) });
    const out = [d, ...pages];
    out.dict = d.length;
    return out;
}

const ID3 = page({ n: 3, data: Buffer.concat([1, 2, 3].map(le32)) });
const hand = {
    // INT96 timestamps (Julian day, nanoseconds of the day) beside an id
    int96: file({
        columns: [{ name: 'id', type: INT32 }, { name: 'ts', type: INT96, optional: true }],
        rows: 3,
        chunks: [[ID3], [page({
            n: 3,
            data: Buffer.concat([le32(hybrid([1, 0, 1], 1).length), hybrid([1, 0, 1], 1),
                ...[[2460311, 36000123456000n], [2440588, 0n]].map(([jd, ns]) =>
                    Buffer.concat([le64(ns), le32(jd)]))]),
        })]],
    }),
    // definition levels in the deprecated BIT_PACKED encoding (MSB first)
    bit_packed_levels: file({
        columns: [{ name: 'id', type: INT32 }, { name: 'v', type: INT32, optional: true }],
        rows: 3,
        chunks: [[ID3], [page({ n: 3, defEnc: BIT_PACKED, data: Buffer.concat([Buffer.from([0b10100000]), le32(7), le32(9)]) })]],
    }),
    bad_dict_index: file({
        columns: [{ name: 'v', type: INT32 }],
        rows: 3,
        chunks: [dictChunk([10, 20], [page({ n: 3, enc: RLE_DICT, data: Buffer.from([2, 3 << 1, 3]) })])],
    }),
    bad_encoding: file({
        columns: [{ name: 'v', type: INT32 }],
        rows: 3,
        chunks: [[page({ n: 3, enc: BIT_PACKED, data: Buffer.from([0, 0, 0]) })]],
    }),
    bad_codec: file({
        columns: [{ name: 'v', type: INT32 }],
        rows: 3,
        chunks: [[ID3]],
        codecs: [3], // LZO
    }),
    bad_snappy: file({
        columns: [{ name: 'v', type: INT32 }],
        rows: 3,
        chunks: [[page({ n: 3, data: Buffer.alloc(12), compressed: Buffer.from([12, 0xff, 0xff, 0xff]) })]],
        codecs: [1],
    }),
    bad_gzip_size: file({
        columns: [{ name: 'v', type: INT32 }],
        rows: 3,
        chunks: [[page({ n: 3, data: Buffer.concat([1, 2, 3].map(le32)), size: 16,
                         compressed: gzipSync(Buffer.concat([1, 2, 3].map(le32))) })]],
        codecs: [2],
    }),
    bad_page_header: file({
        columns: [{ name: 'v', type: INT32 }],
        rows: 3,
        chunks: [[page({ n: 3, data: Buffer.concat([1, 2, 3].map(le32)), raw: Buffer.from([0x15, 0x00, 0x19, 0xff, 0xff]) })]],
    }),
    bad_levels: file({
        columns: [{ name: 'v', type: INT32, optional: true }],
        rows: 3,
        // levels for 1 value (an RLE run of 1), the page says 3
        chunks: [[page({ n: 3, data: Buffer.concat([le32(2), Buffer.from([1 << 1, 1]), le32(5)]) })]],
    }),
    bad_page_count: file({
        columns: [{ name: 'v', type: INT32 }],
        rows: 2,
        chunks: [[ID3]],
    }),
    bad_chunk_short: file({
        columns: [{ name: 'v', type: INT32 }],
        rows: 5,
        chunks: [[ID3]],
    }),
    bad_interval: file({
        columns: [{ name: 'id', type: INT32 }, { name: 'v', type: 7, length: 12, converted: 21 }],
        rows: 3,
        chunks: [[ID3], [page({ n: 3, data: Buffer.alloc(36) })]],
    }),
    encrypted_footer: Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(20), le32(20), Buffer.from('PARE')]),
    // a plaintext footer (encryption_algorithm set) over one encrypted column
    encrypted_columns: file({
        columns: [{ name: 'id', type: INT32 }, { name: 'v', type: INT32, encrypted: true }],
        rows: 3,
        chunks: [[ID3], [ID3]],
        footerExtra: (t) => t.struct(8, (e) => e.struct(1, () => {})),
    }),
};
for (const [name, bytes] of Object.entries(hand)) written.set(`${name}.parquet`, bytes);

// ------------------------------------------------- damaged DuckDB files

const good = written.get('codec_gzip.parquet');
const cut = (b, n) => b.subarray(0, n);
written.set('truncated.parquet', cut(good, good.length - 100));
written.set('bad_magic.parquet', Buffer.concat([Buffer.from('PAR2'), good.subarray(4)]));
{
    const b = Buffer.from(good);
    b.writeUInt32LE(b.length, b.length - 8);
    written.set('bad_footer_length.parquet', b);
}
{
    // gzip's CRC-32 at the end of the first column's last page
    const tmp = join(OUT, '.gz.tmp.parquet');
    writeFileSync(tmp, good);
    const [[start, size]] = await sql(`SELECT data_page_offset, total_compressed_size FROM parquet_metadata('${tmp}')
                                       WHERE row_group_id = 0 AND column_id = 0`);
    (await import('node:fs')).rmSync(tmp);
    const b = Buffer.from(good);
    b[Number(start) + Number(size) - 6] ^= 0xff;
    written.set('bad_gzip_crc.parquet', b);
}

// ------------------------------------------------------ DuckDB's answers

async function answer(bytes) {
    const tmp = join(OUT, '.answer.tmp.parquet');
    writeFileSync(tmp, bytes);
    try {
        return await parquetAnswer(db, tmp);
    } finally {
        (await import('node:fs')).rmSync(tmp);
    }
}

// Files tally refuses (messages in tests/cli/parquet.bats) get no answer.
const refused = new Set(['u64_max', 'ts_nanos', 'truncated', 'bad_magic', 'bad_footer_length',
    'bad_gzip_crc', 'bad_dict_index', 'bad_encoding', 'bad_codec', 'bad_snappy', 'bad_gzip_size',
    'bad_page_header', 'bad_levels', 'bad_page_count', 'bad_chunk_short', 'bad_interval',
    'encrypted_footer', 'encrypted_columns']);
// DuckDB cannot read the deprecated BIT_PACKED levels: that answer is in the bats file.
const noOracle = new Set(['bit_packed_levels']);
// The codec_* and pages_v2 files hold one table: one answer, mixed.csv.
for (const [name, bytes] of [...written]) {
    const base = name.replace(/\.parquet$/, '');
    if (refused.has(base) || noOracle.has(base)) continue;
    const a = Buffer.from(await answer(bytes));
    const shared = base.startsWith('codec_') || base === 'pages_v2' ? 'mixed.csv' : `${base}.csv`;
    if (written.has(shared) && !written.get(shared).equals(a))
        throw new Error(`DuckDB reads ${name} otherwise than the other files of ${shared}`);
    written.set(shared, a);
}

// ------------------------------------------------------------- output

let differ = 0;
for (const [name, bytes] of [...written].sort()) {
    const path = join(OUT, name);
    if (checkOnly) {
        if (!existsSync(path) || !readFileSync(path).equals(bytes)) {
            console.log(`gen-parquet-fixtures: ${name} differs from what the script makes`);
            differ++;
        }
    } else {
        writeFileSync(path, bytes);
    }
}
console.log(`gen-parquet-fixtures: ${written.size} files${checkOnly ? `, ${differ} differ` : ' written'}`);
process.exit(differ ? 1 : 0);
