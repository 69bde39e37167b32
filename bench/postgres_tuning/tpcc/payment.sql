-- TPC-C payment (clause 2.5): the warehouse's and district's year-to-date totals, the customer's balance and a
-- history row. Customers are chosen by id with NURand (the specification picks 60% by last name, left out here)
-- and always in their home warehouse (the 15% remote payments are left out).
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\set cents random(100, 500000)
BEGIN;
UPDATE warehouse SET w_ytd = w_ytd + :cents / 100.0 WHERE w_id = :w_id;
UPDATE district SET d_ytd = d_ytd + :cents / 100.0 WHERE d_w_id = :w_id AND d_id = :d_id;
UPDATE customer SET c_balance = c_balance - :cents / 100.0, c_ytd_payment = c_ytd_payment + :cents / 100.0,
  c_payment_cnt = c_payment_cnt + 1
  WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
INSERT INTO history VALUES (:c_id, :d_id, :w_id, :d_id, :w_id, now(), :cents / 100.0, 'payment');
END;
