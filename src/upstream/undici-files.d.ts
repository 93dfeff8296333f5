// undici's files loaded one by one (untyped on their own): see undici-parts.ts, which gives them undici's types.
declare module 'undici/lib/*.js' {
  const part: unknown;
  export default part;
}
