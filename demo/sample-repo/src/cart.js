/**
 * Total price of a shopping cart, in the currency's main unit, rounded to cents.
 * @param {{ price: number, quantity: number }[]} items
 * @param {number} discountPercent discount applied to the subtotal, 0–100
 */
export function cartTotal(items, discountPercent = 0) {
  if (discountPercent < 0 || discountPercent > 100) {
    throw new RangeError(`discount must be between 0 and 100, got ${discountPercent}`);
  }
  const subtotal = items.reduce((sum, item) => sum + item.price, 0);
  return Math.round(subtotal * (1 - discountPercent / 100) * 100) / 100;
}
