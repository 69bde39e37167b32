-- TPC-C order-status (clause 2.6), read only: the customer, their latest order and its lines (by id; the
-- specification picks 60% by last name).
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
BEGIN;
SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
SELECT coalesce(max(o_id), 0) AS o_id FROM orders WHERE o_w_id = :w_id AND o_d_id = :d_id AND o_c_id = :c_id \gset
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
  WHERE ol_w_id = :w_id AND ol_d_id = :d_id AND ol_o_id = :o_id;
END;
