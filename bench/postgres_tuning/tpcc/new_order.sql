-- TPC-C new-order (clause 2.4), 5 to 15 lines from the home warehouse (the 1% remote lines and the 1% rollback
-- of the specification are left out). Customer and item ids follow NURand(A, x, y) =
-- (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x, clause 2.1.6; pgbench has no loops, so the 15
-- possible lines are drawn up front and the first ol_cnt used. Stock rows are locked in item order first, so
-- concurrent new-orders cannot deadlock on them.
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\set ol_cnt random(5, 15)
\set i1 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i2 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i3 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i4 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i5 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i6 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i7 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i8 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i9 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i10 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i11 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i12 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i13 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i14 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set i15 ((random(0, 8191) | random(1, 100000)) + 7911) % 100000 + 1
\set q random(1, 10)
BEGIN;
SELECT c_discount, c_last, c_credit, w_tax FROM customer JOIN warehouse ON w_id = c_w_id
  WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = :w_id AND d_id = :d_id
  RETURNING d_next_o_id - 1 AS o_id, d_tax \gset
INSERT INTO orders (o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local)
  VALUES (:w_id, :d_id, :o_id, :c_id, now(), :ol_cnt, 1);
INSERT INTO new_order VALUES (:w_id, :d_id, :o_id);
SELECT count(*) FROM (SELECT 1 FROM stock WHERE s_w_id = :w_id AND s_i_id IN (SELECT i_id FROM (VALUES (1, :i1::int), (2, :i2::int), (3, :i3::int), (4, :i4::int), (5, :i5::int), (6, :i6::int), (7, :i7::int), (8, :i8::int),
    (9, :i9::int), (10, :i10::int), (11, :i11::int), (12, :i12::int), (13, :i13::int), (14, :i14::int), (15, :i15::int)) v (n, i_id) WHERE n <= :ol_cnt)
  ORDER BY s_i_id FOR UPDATE) locked;
WITH lines AS (SELECT n, i_id FROM (VALUES (1, :i1::int), (2, :i2::int), (3, :i3::int), (4, :i4::int), (5, :i5::int), (6, :i6::int), (7, :i7::int), (8, :i8::int),
    (9, :i9::int), (10, :i10::int), (11, :i11::int), (12, :i12::int), (13, :i13::int), (14, :i14::int), (15, :i15::int)) v (n, i_id) WHERE n <= :ol_cnt),
  taken AS (UPDATE stock SET s_quantity = CASE WHEN s_quantity >= :q + 10 THEN s_quantity - :q
                                               ELSE s_quantity - :q + 91 END,
              s_ytd = s_ytd + :q, s_order_cnt = s_order_cnt + 1
            WHERE s_w_id = :w_id AND s_i_id IN (SELECT i_id FROM lines) RETURNING s_i_id, s_dist_01)
INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount,
  ol_dist_info)
  SELECT :w_id, :d_id, :o_id, l.n, l.i_id, :w_id, :q, :q * i.i_price, t.s_dist_01
  FROM lines l JOIN item i ON i.i_id = l.i_id JOIN taken t ON t.s_i_id = l.i_id;
END;
