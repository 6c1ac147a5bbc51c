#!/usr/bin/env bats
# run-cli: spill
# Steps combined: they apply in the order typed, see each other's columns,
# and a filter after a group-by acts on the groups (HAVING).
# Fixture data/sales.csv (expected values worked out by hand):
#   id region product qty price  qty*price
#   1  north  apple   3   1.5    4.5
#   2  south  pear    -   2.25   -
#   3  north  pear    5   2.25   11.25
#   4  east   apple   1   1.5    1.5
#   5  south  apple   10  1.25   12.5
#   6  north  fig     2   4.0    8.0
#   7  east   pear    7   2.0    14.0
#   8  -      fig     4   4.0    16.0

load helpers

setup() {
    enter_workdir
    cp "$DATA/sales.csv" .
}

@test "steps apply in the order typed: head then filter" {
    assert_run_out sales.csv --sort -qty --head 3 --filter "region = 'north'" --select id <<'EOF'
id
3
EOF
}

@test "steps apply in the order typed: filter then head" {
    assert_run_out sales.csv --filter "region = 'north'" --sort -qty --head 3 --select id <<'EOF'
id
3
1
6
EOF
}

@test "a --with column can be filtered, sorted and selected" {
    assert_run_out sales.csv --with 'v = qty * price' --filter 'v > 10' --sort -v --select 'id, v' <<'EOF'
id,v
8,16.0
7,14.0
5,12.5
3,11.25
EOF
}

@test "sort by an expression" {
    assert_run_out sales.csv --sort 'qty * price' --select id <<'EOF'
id
4
1
6
3
5
7
8
2
EOF
}

@test "a renamed column is known by its new name" {
    assert_run_out sales.csv --rename qty:q --filter 'q > 5' --select id,q <<'EOF'
id,q
5,10
7,7
EOF
}

@test "drop then add a column of the same name appends it at the end" {
    assert_run_out sales.csv --head 1 --drop qty --with 'qty = 0' <<'EOF'
id,region,product,price,day,qty
1,north,apple,1.5,2024-01-01,0
EOF
}

@test "group-by with an expression inside the aggregate" {
    assert_run_out sales.csv --group-by region --agg 'sum(qty * price)' <<'EOF'
region,sum(qty*price)
north,23.75
south,12.5
east,15.5
,16.0
EOF
}

@test "a filter after a group-by acts on the groups (HAVING)" {
    assert_run_out sales.csv --group-by region --agg 'n = count(), s = sum(qty)' --filter 'n >= 2 and s > 8' <<'EOF'
region,n,s
north,3,10
south,2,10
EOF
}

@test "filter, group-by, HAVING, sort and head in one pipeline" {
    assert_run_out sales.csv --filter 'price < 4' --with 'v = qty * price' --group-by product --agg 'n = count(), total = sum(v)' --filter 'n > 1' --sort -total --head 1 <<'EOF'
product,n,total
pear,3,25.25
EOF
}

@test "two group-bys in a row" {
    assert_run_out sales.csv --group-by 'region, product' --agg 'n = count()' --group-by region --agg 'products = count()' <<'EOF'
region,products
north,3
south,2
east,2
,1
EOF
}

@test "a head before a group-by aggregates only those rows" {
    assert_run_out sales.csv --head 3 --agg 'n = count(), s = sum(qty)' <<'EOF'
n,s
3,8
EOF
}

@test "string aggregates" {
    assert_run_out sales.csv --group-by region --agg "lo = min(product), hi = max(product), k = count_distinct(product), joined = string_agg(product, ';')" <<'EOF'
region,lo,hi,k,joined
north,apple,pear,3,apple;pear;fig
south,apple,pear,2,pear;apple
east,apple,pear,2,apple;pear
,fig,fig,1,fig
EOF
}

@test "distinct on a list after a sort keeps the first row in the current order" {
    assert_run_out sales.csv --sort -price --distinct product --select product,id <<'EOF'
product,id
fig,6
pear,2
apple,1
EOF
}

@test "distinct on all columns after a select" {
    assert_run_out sales.csv --select 'product, price' --distinct --sort product <<'EOF'
product,price
apple,1.5
apple,1.25
fig,4.0
pear,2.25
pear,2.0
EOF
}

@test "head --by after a group-by and sort: the best product per region" {
    assert_run_out sales.csv --filter 'region is not null' --group-by 'region, product' --agg 'q = sum(qty)' --sort '-q' --head 1 --by region <<'EOF'
region,product,q
south,apple,10
east,pear,7
north,pear,5
EOF
}

@test "select then with then drop" {
    assert_run_out sales.csv --head 2 --select 'id, product' --with "label = product || '#' || id" --drop product <<'EOF'
id,label
1,apple#1
2,pear#2
EOF
}

@test "date parts in a group-by key" {
    assert_run_out sales.csv --with 'd = day(day)' --group-by d --agg 'n = count()' <<'EOF'
d,n
1,1
2,2
3,2
4,1
5,2
EOF
}

@test "drop then head (the limit moves below the projection)" {
    assert_run_out sales.csv --drop 'id, price' --head 2 <<'EOF'
region,product,qty,day
north,apple,3,2024-01-01
south,pear,,2024-01-02
EOF
}

@test "select then head then with" {
    assert_run_out sales.csv --select 'id, qty' --head 2 --with 'q2 = qty * 2' <<'EOF'
id,qty,q2
1,3,6
2,,
EOF
}
