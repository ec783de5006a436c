// A price list worker that fails as it starts (price-list-renderer.built-spec.ts): the renderer
// renders inline instead.
throw new Error('this price list worker fails as it starts');
