/** The few s3rver APIs the benchmark uses (the package ships no type declarations). */
declare module 's3rver' {
  export default class S3rver {
    constructor(options: { port: number; address: string; silent: boolean; directory: string });
    run(): Promise<unknown>;
    close(): Promise<void>;
  }
}
