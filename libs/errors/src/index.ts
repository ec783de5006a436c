// The coded-error base of every library and app: `@app/errors`.
export { CodedError } from './coded-error';
