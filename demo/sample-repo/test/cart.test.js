import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cartTotal } from '../src/cart.js';

test('an empty cart costs nothing', () => {
  assert.equal(cartTotal([]), 0);
});

test('prices are multiplied by quantities', () => {
  assert.equal(cartTotal([{ price: 2.5, quantity: 4 }, { price: 1, quantity: 1 }]), 11);
});

test('the discount applies to the subtotal', () => {
  assert.equal(cartTotal([{ price: 10, quantity: 3 }], 10), 27);
});

test('a discount outside 0–100 is refused', () => {
  assert.throws(() => cartTotal([], 120), RangeError);
});
