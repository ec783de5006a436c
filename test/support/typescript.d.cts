// Types of typescript.cjs, for the global setup.

/** The repository's root. */
export declare const ROOT: string;
/** tsconfig.json's `paths`, each alias with the absolute path it names. */
export declare const ALIASES: Readonly<Record<string, string>>;
/** swc's options for our TypeScript (or for JavaScript that Jest compiles). */
export declare function swcOptions(syntax: 'typescript' | 'ecmascript'): Record<string, unknown>;
/** Makes `require('@app/...')` load what tsconfig.json's paths name; returns the undo. */
export declare function resolveAliases(): () => void;
