-- A TPC-C-like schema and initial population, sized by the TPC-C specification (revision 5.11, clause 4.3.3.1)
-- per warehouse: 10 districts, 3,000 customers per district with one history row each, 3,000 orders per district
-- (5 to 15 lines each, the last 900 undelivered in new_order), 100,000 stock rows; 100,000 items in all.
-- Column lists follow clause 1.3 with their filler columns (names, addresses, s_dist_01..10, c_data) so rows are
-- as wide as the specification's; contents are random strings, not the specification's exact distributions.
-- Load with: psql -v warehouses=N -f load.sql   (server-side generation, about 95 MB per warehouse)
\set ON_ERROR_STOP on
DROP TABLE IF EXISTS order_line, new_order, orders, history, customer, district, stock, item, warehouse;

CREATE TABLE warehouse (w_id int PRIMARY KEY, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
  w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2));
CREATE TABLE district (d_w_id int, d_id int, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
  d_city varchar(20), d_state char(2), d_zip char(9), d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id int,
  PRIMARY KEY (d_w_id, d_id));
CREATE TABLE customer (c_w_id int, c_d_id int, c_id int, c_first varchar(16), c_middle char(2), c_last varchar(16),
  c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9),
  c_phone char(16), c_since timestamptz, c_credit char(2), c_credit_lim numeric(12,2), c_discount numeric(4,4),
  c_balance numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id));
CREATE TABLE history (h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date timestamptz,
  h_amount numeric(6,2), h_data varchar(24));
CREATE TABLE item (i_id int PRIMARY KEY, i_im_id int, i_name varchar(24), i_price numeric(5,2), i_data varchar(50));
CREATE TABLE stock (s_w_id int, s_i_id int, s_quantity int, s_dist_01 char(24), s_dist_02 char(24),
  s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24),
  s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int,
  s_data varchar(50), PRIMARY KEY (s_w_id, s_i_id));
CREATE TABLE orders (o_w_id int, o_d_id int, o_id int, o_c_id int, o_entry_d timestamptz, o_carrier_id int,
  o_ol_cnt int, o_all_local int, PRIMARY KEY (o_w_id, o_d_id, o_id));
CREATE TABLE new_order (no_w_id int, no_d_id int, no_o_id int, PRIMARY KEY (no_w_id, no_d_id, no_o_id));
CREATE TABLE order_line (ol_w_id int, ol_d_id int, ol_o_id int, ol_number int, ol_i_id int, ol_supply_w_id int,
  ol_delivery_d timestamptz, ol_quantity int, ol_amount numeric(6,2), ol_dist_info char(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number));

-- md5() gives 32 random hex characters; repeat/substr make strings of the specification's lengths.
INSERT INTO item SELECT i, 1 + (random() * 9999)::int, substr(md5(i::text), 1, 14 + i % 11),
  1 + (random() * 99)::numeric(5,2), substr(repeat(md5(random()::text), 2), 1, 26 + i % 25)
  FROM generate_series(1, 100000) i;
INSERT INTO warehouse SELECT w, 'w' || w, md5(random()::text)::varchar(20), md5(random()::text)::varchar(20),
  md5(random()::text)::varchar(20), 'ST', '123451111', (random() * 0.2)::numeric(4,4), 300000
  FROM generate_series(1, :warehouses) w;
INSERT INTO district SELECT w, d, 'd' || d, md5(random()::text)::varchar(20), md5(random()::text)::varchar(20),
  md5(random()::text)::varchar(20), 'ST', '123451111', (random() * 0.2)::numeric(4,4), 30000, 3001
  FROM generate_series(1, :warehouses) w, generate_series(1, 10) d;
INSERT INTO customer SELECT w, d, c, substr(md5(random()::text), 1, 8 + c % 9), 'OE',
  substr(md5(c::text), 1, 6 + c % 10), md5(random()::text)::varchar(20), md5(random()::text)::varchar(20),
  md5(random()::text)::varchar(20), 'ST', '123451111', lpad(c::text, 16, '5'), now(),
  CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000, (random() * 0.5)::numeric(4,4), -10, 10, 1, 0,
  substr(repeat(md5(random()::text), 16), 1, 300 + c % 201)
  FROM generate_series(1, :warehouses) w, generate_series(1, 10) d, generate_series(1, 3000) c;
INSERT INTO history SELECT c_id, c_d_id, c_w_id, c_d_id, c_w_id, now(), 10, substr(md5(random()::text), 1, 20)
  FROM customer;
INSERT INTO stock SELECT w, i, 10 + (random() * 90)::int, md5(random()::text)::char(24),
  md5(random()::text)::char(24), md5(random()::text)::char(24), md5(random()::text)::char(24),
  md5(random()::text)::char(24), md5(random()::text)::char(24), md5(random()::text)::char(24),
  md5(random()::text)::char(24), md5(random()::text)::char(24), md5(random()::text)::char(24), 0, 0, 0,
  substr(repeat(md5(random()::text), 2), 1, 26 + i % 25)
  FROM generate_series(1, :warehouses) w, generate_series(1, 100000) i;
-- one order per customer (o_c_id = o_id here, the specification permutes them), 5 to 15 lines each
INSERT INTO orders SELECT w, d, o, o, now(), CASE WHEN o < 2101 THEN 1 + o % 10 END, 5 + o % 11, 1
  FROM generate_series(1, :warehouses) w, generate_series(1, 10) d, generate_series(1, 3000) o;
INSERT INTO new_order SELECT o_w_id, o_d_id, o_id FROM orders WHERE o_id > 2100;
INSERT INTO order_line SELECT o_w_id, o_d_id, o_id, n, 1 + (random() * 99999)::int, o_w_id,
  CASE WHEN o_id < 2101 THEN o_entry_d END, 5, CASE WHEN o_id < 2101 THEN 0 ELSE (random() * 9999)::numeric(6,2) END,
  md5(random()::text)::char(24)
  FROM orders, generate_series(1, 15) n WHERE n <= o_ol_cnt;
-- order-status finds a customer's latest order by this index (the specification's access path)
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
VACUUM ANALYZE warehouse, district, customer, history, item, stock, orders, new_order, order_line;
