#!/usr/bin/env bats
# dates.bats -- the date and time functions (man tally, EXPRESSIONS, "Date
# and time functions"): strftime, strptime, try_strptime, epochs,
# date_diff, intervals, the calendar fields, now() and TALLY_NOW, and every
# error they raise.  Expected values are DuckDB 1.5's answers to the same
# queries (tests/diff holds the differential cases).

load 'helpers'

write_t() {
    printf 'id,ts,d,s\n1,2024-03-05 07:08:09.123456,2024-01-31,05/Mar/2024:07:08:09 +0200\n2,1969-12-31 23:59:59,2024-02-29,bad\n3,,,\n' > t.csv
}

@test "dates: strftime of timestamps and dates" {
    write_t
    assert_run_out t.csv --select "id, strftime(ts, '%a %d %b %Y %-I:%M %p') as f, strftime(d, '%Y-W%V-%u') as w, strftime(ts, '%c.%f %z|%Z|%%') as c" <<'EOF'
id,f,w,c
1,Tue 05 Mar 2024 7:08 AM,2024-W05-3,2024-03-05 07:08:09.123456 +00||%
2,Wed 31 Dec 1969 11:59 PM,2024-W09-4,1969-12-31 23:59:59.000000 +00||%
3,,,
EOF
    # revenue per month: a group key spelt as the month
    printf 'ts,v\n2024-01-05 10:00:00,1\n2024-01-20 11:00:00,2\n2024-02-01 00:00:00,4\n' > r.csv
    assert_run_out r.csv --with "m = strftime(ts, '%Y-%m')" --group-by m --agg 's = sum(v)' <<'EOF'
m,s
2024-01,3
2024-02,4
EOF
}

@test "dates: strptime and try_strptime" {
    write_t
    assert_run_out t.csv --select "id, try_strptime(s, '%d/%b/%Y:%H:%M:%S %z') as p, strptime('2024-3-5', '%Y-%m-%d') as q" <<'EOF'
id,p,q
1,2024-03-05 05:08:09,2024-03-05 00:00:00
2,,2024-03-05 00:00:00
3,,2024-03-05 00:00:00
EOF
    assert_run_out t.csv --head 1 --select "strptime('24-03-05 1:02 PM', '%y-%m-%d %I:%M %p') as a, strptime('march 5 2024', '%B %d %Y') as b, strptime('2024 065', '%Y %j') as c, strptime(' 12.5 ', '%S.%g') as e" <<'EOF'
a,b,c,e
2024-03-05 13:02:00,2024-03-05 00:00:00,2024-03-05 00:00:00,1900-01-01 00:00:12.5
EOF
}

@test "dates: a value strptime cannot parse is a data error naming file, line, column and value" {
    write_t
    run_tally t.csv --select "strptime(s, '%d/%b/%Y:%H:%M:%S %z') as p" -o out.csv
    assert_err 1 <<'EOF'
tally: t.csv:3:4: cannot parse "bad" as a timestamp with format "%d/%b/%Y:%H:%M:%S %z" in "strptime(s, '%d/%b/%Y:%H:%M:%S %z')": strptime("bad", "%d/%b/%Y:%H:%M:%S %z") (column "s")
  --select: strptime(s, '%d/%b/%Y:%H:%M:%S %z') as p
            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
EOF
    assert_only_files t.csv
}

@test "dates: a bad constant format is a usage error with a caret at the code" {
    write_t
    run_tally t.csv --select "strftime(ts, '%Y %Q')"
    assert_err 2 <<'EOF'
tally: invalid strftime format: unknown format code %Q
  --select: strftime(ts, '%Y %Q')
                             ^^
EOF
    run_tally t.csv --select "strftime(ts, '%-Y')"
    assert_err 2 <<'EOF'
tally: invalid strftime format: unknown format code %-Y
  --select: strftime(ts, '%-Y')
                          ^^^
EOF
    run_tally t.csv --select "strftime(ts, 'x%')"
    assert_err 2 <<'EOF'
tally: invalid strftime format: a format cannot end in a lone %
  --select: strftime(ts, 'x%')
                           ^
EOF
    run_tally t.csv --select "strptime(s, '%Y %V')"
    assert_err 2 <<'EOF'
tally: invalid strptime format: format code %V is not supported by strptime
  --select: strptime(s, '%Y %V')
                            ^^
EOF
    run_tally t.csv --select "try_strptime(s, 'it''s %q')"
    assert_err 2 <<'EOF'
tally: invalid try_strptime format: unknown format code %q
  --select: try_strptime(s, 'it''s %q')
                            ^^^^^^^^^^
EOF
}

@test "dates: a bad format read from a column is a data error at its row" {
    printf 'f\n%%Y\n%%Q\n' > f.csv
    run_tally f.csv --select "strftime(date '2024-01-01', f) as x"
    assert_err 1 <<'EOF'
tally: f.csv:3:1: unknown format code %Q in format "%Q" in "strftime(date '2024-01-01', f)": strftime(2024-01-01, "%Q") (column "f")
  --select: strftime(date '2024-01-01', f) as x
            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
EOF
}

@test "dates: epoch, epoch_ms, epoch_us, to_timestamp" {
    write_t
    assert_run_out t.csv --select "id, epoch(ts) as e, epoch_ms(ts) as ms, epoch_us(ts) as us, to_timestamp(epoch(ts)) as back, epoch_ms(1500) as m2" <<'EOF'
id,e,ms,us,back,m2
1,1709622489.123456,1709622489123,1709622489123456,2024-03-05 07:08:09.123456+00,1970-01-01 00:00:01.5
2,-1.0,-1000,-1000000,1969-12-31 23:59:59+00,1970-01-01 00:00:01.5
3,,,,,1970-01-01 00:00:01.5
EOF
    run_tally t.csv --select "to_timestamp(1e300) as x"
    assert_err 1 <<'EOF'
tally: t.csv:2: to_timestamp: epoch seconds out of the timestamp range in "to_timestamp(1e300)": to_timestamp(1e+300)
  --select: to_timestamp(1e300) as x
            ^^^^^^^^^^^^^^^^^^^
EOF
}

@test "dates: date_diff counts boundaries; the calendar fields" {
    write_t
    assert_run_out t.csv --select "id, date_diff('day', d, ts) as dd, datediff('month', d, ts) as dm, date_diff('hour', ts, d) as dh, dayofweek(d) as dw, isodow(d) as iso, dayofyear(d) as dy, week(d) as wk, quarter(d) as q, yearweek(d) as yw, isoyear(d) as iy" <<'EOF'
id,dd,dm,dh,dw,iso,dy,wk,q,yw,iy
1,34,2,-823,3,3,31,5,1,202405,2024
2,-19783,-650,474769,4,4,60,9,1,202409,2024
3,,,,,,,,,,
EOF
    assert_run_out t.csv --head 1 --select "date_diff('hour', timestamp '2024-01-01 10:59:00', timestamp '2024-01-01 11:01:00') as h, date_diff('week', date '2024-01-06', date '2024-01-08') as w, date_diff('year', date '2024-12-31', date '2025-01-01') as y" <<'EOF'
h,w,y
1,0,1
EOF
    run_tally t.csv --select "date_diff('fortnight', d, ts)"
    assert_err 2 <<'EOF'
tally: unknown date part "fortnight" for date_diff (expected year, quarter, month, week, day, hour, minute or second)
  --select: date_diff('fortnight', d, ts)
                      ^^^^^^^^^^^
EOF
    run_tally t.csv --select "date_trunc('fortnight', d)"
    assert_err 2 <<'EOF'
tally: unknown date part "fortnight" for date_trunc (expected year, quarter, month, week, day, hour, minute or second)
  --select: date_trunc('fortnight', d)
                       ^^^^^^^^^^^
EOF
    run_tally t.csv --select "date_diff(s, d, ts) as x"
    assert_err 1 <<'EOF'
tally: t.csv:2: unknown date part "05/Mar/2024:07:08:09 +0200" for date_diff (expected year, quarter, month, week, day, hour, minute or second) in "date_diff(s, d, ts)": date_diff("05/Mar/2024:07:08:09 +0200", 2024-01-31 00:00:00, 2024-03-05 07:08:09.123456)
  --select: date_diff(s, d, ts) as x
            ^^^^^^^^^^^^^^^^^^^
EOF
}

@test "dates: intervals move dates and timestamps, months clamped to the month's end" {
    write_t
    assert_run_out t.csv --select "id, d + interval '1 month' as a, d - interval '1 year' as b, ts + interval 90 minute as c, date_add(ts, interval '1 day 2 hours ago') as e, interval '1.5 days' + d as f" <<'EOF'
id,a,b,c,e,f
1,2024-02-29 00:00:00,2023-01-31 00:00:00,2024-03-05 08:38:09.123456,2024-03-04 05:08:09.123456,2024-02-01 12:00:00
2,2024-03-29 00:00:00,2023-02-28 00:00:00,1970-01-01 01:29:59,1969-12-30 21:59:59,2024-03-01 12:00:00
3,,,,,
EOF
    run_tally explain t.csv --select "ts + interval '1 day' as x"
    assert_ok
    [[ "$output" == *"project ts + interval '1 day' as x"* ]] || { show; false; }
    run_tally t.csv --select "timestamp '9999-01-01 00:00:00' + interval '300000 years' as x"
    assert_err 1 <<'EOF'
tally: t.csv:2: timestamp out of range in "timestamp '9999-01-01 00:00:00' + interval '300000 years'": 9999-01-01 00:00:00 + "300000 years"
  --select: timestamp '9999-01-01 00:00:00' + interval '300000 years' as x
            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
EOF
}

@test "dates: a bad interval is a usage error with a caret" {
    write_t
    run_tally t.csv --select "ts + interval '3 fortnights'"
    assert_err 2 <<'EOF'
tally: invalid interval: unknown interval unit "fortnights"
  --select: ts + interval '3 fortnights'
                             ^^^^^^^^^^
EOF
    run_tally t.csv --select "ts + interval '2 hours 30'"
    assert_err 2 <<'EOF'
tally: invalid interval: a number in an interval needs a unit (days, hours, ...)
  --select: ts + interval '2 hours 30'
                                   ^^
EOF
    run_tally t.csv --select "ts + interval 'soon'"
    assert_err 2 <<'EOF'
tally: invalid interval: cannot read an interval at "soon"
  --select: ts + interval 'soon'
                           ^^^^
EOF
    run_tally t.csv --select "ts + interval ''"
    assert_err 2 <<'EOF'
tally: invalid interval: empty interval
  --select: ts + interval ''
                           ^
EOF
    run_tally t.csv --select "ts + interval 99999999999 years"
    assert_err 2 <<'EOF'
tally: invalid interval: interval out of range
  --select: ts + interval 99999999999 years
                          ^^^^^^^^^^^^^^^^^
EOF
}

@test "dates: an interval stands only beside a date or timestamp" {
    write_t
    run_tally t.csv --select "interval '3 days' as x"
    assert_err 2 <<'EOF'
tally: an interval can only be added to or subtracted from a date or timestamp
  --select: interval '3 days' as x
            ^^^^^^^^^^^^^^^^^
EOF
    run_tally t.csv --select "id + interval '1 day' as x"
    assert_err 2 <<'EOF'
tally: an interval can only be added to or subtracted from a date or timestamp, not int64
  --select: id + interval '1 day' as x
            ^^
EOF
    run_tally t.csv --select "interval '1 day' - ts"
    assert_err 2 <<'EOF'
tally: cannot subtract a date or timestamp from an interval
  --select: interval '1 day' - ts
            ^^^^^^^^^^^^^^^^^^^^^
EOF
    run_tally t.csv --agg "m = max(interval '1 day')"
    assert_err 2 <<'EOF'
tally: an interval can only be added to or subtracted from a date or timestamp
  --agg: m = max(interval '1 day')
                 ^^^^^^^^^^^^^^^^
EOF
    run_tally t.csv --select "date_add(d, '1 day')"
    assert_err 2 <<'EOF'
tally: date_add needs an interval (interval '1 day') as its second argument
  --select: date_add(d, '1 day')
                        ^^^^^^^
EOF
}

@test "dates: now(), current_date and current_timestamp are the run's instant, TALLY_NOW fixes it" {
    printf 'current_date,n\n2024-01-01,1\n2024-04-25,2\n' > c.csv
    TALLY_NOW=2024-05-01T12:00:00Z assert_run_out c.csv --select 'n, now() as a, current_timestamp as b, current_date as c, "current_date" as q' <<'EOF'
n,a,b,c,q
1,2024-05-01 12:00:00+00,2024-05-01 12:00:00+00,2024-05-01,2024-01-01
2,2024-05-01 12:00:00+00,2024-05-01 12:00:00+00,2024-05-01,2024-04-25
EOF
    # the last 30 days, as a cron job asks
    TALLY_NOW=2024-05-01 assert_run_out c.csv --filter '"current_date" >= current_date - interval 30 days' --select n <<'EOF'
n
2
EOF
    TALLY_NOW=yesterday run_tally c.csv --select 'now()'
    assert_err 2 <<'EOF'
tally: TALLY_NOW is not a timestamp (expected YYYY-MM-DDTHH:MM:SS[.ffffff][Z], in UTC)
EOF
}

@test "dates: NDJSON strings that are dates or timestamps are typed as in CSV; CSV -> NDJSON -> tally keeps them" {
    write_t
    run_tally t.csv -o t.ndjson
    assert_ok
    assert_run_out schema t.ndjson <<'EOF'
column,type
id,int64
ts,timestamp
d,date
s,string
EOF
    assert_run_out t.ndjson --select "id, d + interval '1 month' as m, strftime(ts, '%Y') as y" <<'EOF'
id,m,y
1,2024-02-29 00:00:00,2024
2,2024-03-29 00:00:00,1969
3,,
EOF
    # a T between date and time, and a bare date among timestamps
    printf '{"t":"2024-01-01T10:00:00.5"}\n{"t":"2024-01-02"}\n{"t":null}\n' > ts.ndjson
    assert_run_out ts.ndjson <<'EOF'
t
2024-01-01 10:00:00.5
2024-01-02 00:00:00

EOF
    # with Z or an offset: a timestamptz; no such month: a string
    printf '{"t":"2024-01-01T10:00:00Z","u":"2024-13-01"}\n{"t":"2024-01-01 12:00:00+02","u":null}\n' > z.ndjson
    assert_run_out schema z.ndjson <<'EOF'
column,type
t,timestamptz
u,string
EOF
    assert_run_out z.ndjson <<'EOF'
t,u
2024-01-01 10:00:00+00,2024-13-01
2024-01-01 10:00:00+00,
EOF
}

@test "dates: an NDJSON date column meeting a later non-date widens to string, for any batch size and threads" {
    {
        for i in $(seq 1 300); do printf '{"d":"2024-01-%02d","t":"2024-01-01T10:00:0%d"}\n' $((i % 28 + 1)) $((i % 10)); done
        echo '{"d":"soon","t":"2024-02-02"}'
    } > late.ndjson
    for rows in 16 65536; do
        for th in 1 4; do
            TALLY_BATCH_ROWS=$rows assert_run_out late.ndjson --threads $th --agg 'n = count_distinct(d), m = max(t), l = max(d)' <<'EOF'
n,m,l
29,2024-02-02 00:00:00,soon
EOF
        done
    done
    TALLY_BATCH_ROWS=16 assert_run_out schema late.ndjson <<'EOF'
column,type
d,string
t,timestamp
EOF
}

write_tz() {
    printf 'id,t\n1,2024-03-05T07:08:09Z\n2,2024-03-05 09:08:09+02:00\n3,2024-03-05T07:08:09.5-0130\n4,\n' > tz.csv
}

@test "time zones: timestamps that all carry Z or an offset are a timestamptz, in UTC with +00" {
    write_tz
    assert_run_out schema tz.csv <<'EOF'
column,type
id,int64
t,timestamptz
EOF
    assert_run_out tz.csv <<'EOF'
id,t
1,2024-03-05 07:08:09+00
2,2024-03-05 07:08:09+00
3,2024-03-05 08:38:09.5+00
4,
EOF
    # a column mixing them with naive timestamps stays a string
    printf 'id,t\n1,2024-03-05T07:08:09Z\n2,2024-03-05 09:08:09\n' > mix.csv
    assert_run_out schema mix.csv <<'EOF'
column,type
id,int64
t,string
EOF
    # +hh and +hhmm, and the output read back again
    printf 't\n2024-01-01 00:30:00+01\n2024-01-01 10:00:00 -0530\n' > off.csv
    assert_run_out off.csv -o back.csv <<'EOF'
EOF
    assert_run_out back.csv <<'EOF'
t
2023-12-31 23:30:00+00
2024-01-01 15:30:00+00
EOF
}

@test "time zones: every writer spells the +00; Parquet keeps it as isAdjustedToUTC" {
    write_tz
    assert_run_out tz.csv --to tsv <<'EOF'
id	t
1	2024-03-05 07:08:09+00
2	2024-03-05 07:08:09+00
3	2024-03-05 08:38:09.5+00
4	
EOF
    assert_run_out tz.csv --to ndjson <<'EOF'
{"id":1,"t":"2024-03-05 07:08:09+00"}
{"id":2,"t":"2024-03-05 07:08:09+00"}
{"id":3,"t":"2024-03-05 08:38:09.5+00"}
{"id":4,"t":null}
EOF
    assert_run_out tz.csv --to table --head 1 <<'EOF'
┌───────┬────────────────────────┐
│    id │ t                      │
│ int64 │ timestamptz            │
├───────┼────────────────────────┤
│     1 │ 2024-03-05 07:08:09+00 │
└───────┴────────────────────────┘
1 row, 2 columns
EOF
    run_tally tz.csv -o tz.parquet
    assert_ok
    assert_run_out schema tz.parquet <<'EOF'
column,type
id,int64
t,timestamptz
EOF
    assert_run_out tz.parquet --select t --head 1 <<'EOF'
t
2024-03-05 07:08:09+00
EOF
    # and through NDJSON
    run_tally tz.csv -o tz.ndjson
    assert_run_out schema tz.ndjson <<'EOF'
column,type
id,int64
t,timestamptz
EOF
}

@test "time zones: in expressions, --schema and casts" {
    write_tz
    assert_run_out tz.csv --filter "t > '2024-03-05 07:30:00'" --select "id, t + interval '1 hour' as h, year(t) as y, strftime(t, '%H:%M %z') as s, t::timestamp as naive, t::date as d, cast(t as string) as txt" <<'EOF'
id,h,y,s,naive,d,txt
3,2024-03-05 09:38:09.5+00,2024,08:38 +00,2024-03-05 08:38:09.5,2024-03-05,2024-03-05 08:38:09.5+00
EOF
    assert_run_out tz.csv --filter "t = timestamp '2024-03-05 07:08:09'" --agg 'n = count(), lo = min(t)' <<'EOF'
n,lo
2,2024-03-05 07:08:09+00
EOF
    printf 't\n2024-03-05 09:08:09\n' > naive.csv
    assert_run_out naive.csv --select "cast(t as timestamptz) as c, try_cast('x' as timestamptz) as d" <<'EOF'
c,d
2024-03-05 09:08:09+00,
EOF
    run_tally naive.csv --schema t:timestamptz
    assert_err 1 'tally: naive.csv:2:1: "2024-03-05 09:08:09" is not a valid timestamptz (column "t")'
}

@test "time zones: a timestamptz column meeting a naive timestamp later is a string, for any batch size" {
    {
        echo t
        for i in $(seq 1 200); do echo "2024-01-01T00:00:0$((i % 10))Z"; done
        echo "2024-01-01 00:00:00"
    } > late.csv
    for rows in 16 65536; do
        TALLY_BATCH_ROWS=$rows assert_run_out late.csv --agg 'n = count_distinct(t), m = max(t)' <<'EOF'
n,m
11,2024-01-01T00:00:09Z
EOF
    done
}
