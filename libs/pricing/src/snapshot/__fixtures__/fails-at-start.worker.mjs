// A price list worker that fails as it starts (price-list-renderer.spec.ts): the renderer
// renders inline instead.
throw new Error('this price list worker fails as it starts');
