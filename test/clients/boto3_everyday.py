"""Everyday boto3 operations against an S3 endpoint; prints one JSON object of what it saw.

Usage: python3 boto3_everyday.py <endpoint> <access-key> <secret-key> <bucket>
"""
import json
import sys
import urllib.request

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config


def main() -> None:
    endpoint, access_key, secret_key, bucket = sys.argv[1:5]
    s3 = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=access_key, aws_secret_access_key=secret_key,
        region_name="us-east-1", config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )
    seen = {}
    s3.create_bucket(Bucket=bucket)
    for index in range(5):
        s3.put_object(Bucket=bucket, Key=f"dir/file-{index}.txt", Body=f"body {index}".encode())
    s3.put_object(Bucket=bucket, Key="top.txt", Body=b"top")
    seen["get"] = s3.get_object(Bucket=bucket, Key="dir/file-3.txt")["Body"].read().decode()
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="dir/", PaginationConfig={"PageSize": 2})
    seen["pages"] = [[item["Key"] for item in page.get("Contents", [])] for page in pages]
    seen["prefixes"] = [item["Prefix"] for item in s3.list_objects_v2(Bucket=bucket, Delimiter="/").get("CommonPrefixes", [])]
    big = bytes(range(256)) * (24 * 1024 + 7)  # a little over 6 MiB: two parts of 5 MiB
    s3.upload_fileobj(_Reader(big), bucket, "big.bin", Config=TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024))
    head = s3.head_object(Bucket=bucket, Key="big.bin")
    seen["multipart"] = {"size": head["ContentLength"], "etag_parts": head["ETag"].strip('"').split("-")[-1]}
    seen["big_ok"] = s3.get_object(Bucket=bucket, Key="big.bin")["Body"].read() == big
    s3.copy_object(Bucket=bucket, Key="copy.txt", CopySource={"Bucket": bucket, "Key": "top.txt"})
    seen["copy"] = s3.get_object(Bucket=bucket, Key="copy.txt")["Body"].read().decode()
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "top.txt"}, ExpiresIn=300)
    seen["presigned_get"] = urllib.request.urlopen(url).read().decode()
    post = s3.generate_presigned_post(bucket, "posted/${filename}", Conditions=[["starts-with", "$key", "posted/"], ["content-length-range", 1, 1000]], ExpiresIn=300)
    seen["presigned_post_status"] = _post_form(post["url"], post["fields"], "hello.txt", b"posted by boto3")
    seen["posted"] = s3.get_object(Bucket=bucket, Key="posted/hello.txt")["Body"].read().decode()
    deleted = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": f"dir/file-{index}.txt"} for index in range(5)]})
    seen["deleted"] = len(deleted.get("Deleted", []))
    for key in ["top.txt", "copy.txt", "big.bin", "posted/hello.txt"]:
        s3.delete_object(Bucket=bucket, Key=key)
    seen["left"] = s3.list_objects_v2(Bucket=bucket).get("KeyCount", 0)
    s3.delete_bucket(Bucket=bucket)
    print(json.dumps(seen))


class _Reader:
    """A file-like object over bytes (upload_fileobj reads it in chunks)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.offset = data, 0

    def read(self, size: int = -1) -> bytes:
        end = len(self.data) if size < 0 else min(len(self.data), self.offset + size)
        chunk, self.offset = self.data[self.offset:end], end
        return chunk


def _post_form(url: str, fields: dict, file_name: str, content: bytes) -> int:
    boundary = "svc-boto3-boundary"
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode() for name, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\nContent-Type: text/plain\r\n\r\n'.encode() + content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    request = urllib.request.Request(url, data=b"".join(parts), method="POST", headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(request) as response:
        return response.status


if __name__ == "__main__":
    main()
